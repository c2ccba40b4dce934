import { badRequest } from "./app-error";

/** Equal for alias purposes: the same primitive, or the same JSON (objects sent under both names). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The value of a field the API accepts under several names (`workspace_id` and
 * `workspaceId`): the one sent, or undefined when none was. Sending two names with
 * different values is a 400 naming both, never a silent pick of one of them.
 * `null` counts as a value (a patch's `notebook_id: null` detaches).
 *
 * @example oneOf({ workspace_id: "ws_a", workspaceId: "ws_a" }, ["workspace_id", "workspaceId"]) // "ws_a"
 * @example oneOf({ workspace_id: "ws_a", workspaceId: "ws_b" }, ["workspace_id", "workspaceId"]) // throws 400
 */
export function oneOf<T = unknown>(
  source: object | undefined | null,
  names: readonly string[],
  prefix = "",
): T | undefined {
  if (!source) return undefined;
  const record = source as Record<string, unknown>;
  let found: { name: string; value: unknown } | undefined;
  for (const name of names) {
    const value = record[name];
    if (value === undefined) continue;
    if (found && !sameValue(found.value, value)) {
      throw badRequest(
        `${prefix}${found.name}, ${prefix}${name}: are aliases of one field and differ; send one of them`,
      );
    }
    found ??= { name, value };
  }
  return found?.value as T | undefined;
}

/**
 * Resolves a value that may also arrive from another place of the request (e.g. the
 * workspace in `metadata.filters.workspaceId` beside `workspace_id`): both given and
 * different is a 400 naming both fields.
 */
export function agree<T>(
  first: { field: string; value: T | undefined },
  second: { field: string; value: T | undefined },
): T | undefined {
  if (first.value !== undefined && second.value !== undefined && !sameValue(first.value, second.value)) {
    throw badRequest(`${first.field}, ${second.field}: name the same thing and differ; send one of them`);
  }
  return first.value ?? second.value;
}
