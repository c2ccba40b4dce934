/**
 * Waiting on a state, not on time. `waitFor` polls until a probe answers a truthy value and
 * resolves with it. Its deadline only guards against a hang (a state that never comes), so
 * it is generous: a slow, busy machine makes a test slower, never wrong. On giving up it
 * throws naming what it waited for and the probe's last answer.
 */

/** Default deadline: under the suite's 60 s per-test timeout, so the error names the state. */
const DEFAULT_TIMEOUT_MS = 45_000;
/** Default pause between probes. */
const DEFAULT_EVERY_MS = 25;

export interface WaitOptions {
  /** What is waited for, as the error on giving up says it: "the index to catch up". */
  what: string;
  /** Give up after this long (default 45 s: only a hang reaches it). */
  timeoutMs?: number;
  /** Pause between probes (default 25 ms). */
  everyMs?: number;
}

const describe = (value: unknown): string => {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text.length > 300 ? `${text.slice(0, 300)}…` : text;
  } catch {
    return String(value);
  }
};

/**
 * Polls `probe` until it returns a truthy value (or a promise of one), and resolves with it.
 *
 * @throws Error `gave up waiting for <what> after <n> s (last answer: …)` at the deadline,
 *   and whatever `probe` throws (a probe that cannot succeed should throw, not wait).
 * @example
 * const file = await waitFor(async () => (await listFiles()).find((f) => f.status !== "pending"), { what: "the PDF's text" });
 */
export async function waitFor<T>(probe: () => T | Promise<T>, options: WaitOptions): Promise<NonNullable<T>> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const everyMs = options.everyMs ?? DEFAULT_EVERY_MS;
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (performance.now() >= deadline) {
      throw new Error(
        `gave up waiting for ${options.what} after ${Math.round(timeoutMs / 1000)} s (last answer: ${describe(value)})`,
      );
    }
    await Bun.sleep(everyMs);
  }
}

/**
 * Reads a value until `done(value)` holds, and resolves with that value; the form for a
 * test that then asserts on what it read.
 *
 * @example
 * const health = await waitUntil(() => server.call("GET", "/health"), ([, body]) => body.index.state === "ok", { what: "a healthy index" });
 */
export async function waitUntil<T>(
  read: () => Promise<T> | T,
  done: (value: T) => boolean,
  options: WaitOptions,
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (performance.now() >= deadline) {
      throw new Error(
        `gave up waiting for ${options.what} after ${Math.round(timeoutMs / 1000)} s (last value: ${describe(value)})`,
      );
    }
    await Bun.sleep(options.everyMs ?? DEFAULT_EVERY_MS);
  }
}
