/**
 * The value at `path` inside parsed JSON of unknown shape (an upstream's reply), or
 * undefined where a step is missing or not an object: `a?.b?.[0]?.c` without `any`.
 *
 * @example
 * pick(JSON.parse('{"choices":[{"message":{"content":"hi"}}]}'), "choices", 0, "message", "content") // "hi"
 * pick("text", "choices") // undefined
 */
export function pick(value: unknown, ...path: Array<string | number>): unknown {
  let at = value;
  for (const key of path) {
    if (typeof at !== "object" || at === null) return undefined;
    at = (at as Record<string | number, unknown>)[key];
  }
  return at;
}
