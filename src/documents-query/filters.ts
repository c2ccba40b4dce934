import { badRequest } from "../errors/app-error";
import { agree, oneOf } from "../lib/aliases";
import type { SearchFilters as SearchFiltersSchema } from "../memories/model";

/** Equality filters per request (keys of `filter.eq` and `filters`/`metadata.filters` together). */
export const MAX_FILTER_KEYS = 32;
/** Characters of one string filter value: an equality test on metadata needs no more. */
export const MAX_FILTER_VALUE_CHARS = 1_024;

type ApiFilters = typeof SearchFiltersSchema.static;
const NAMED_KEYS = new Set(["workspaceId", "workspace_id", "session_id", "sessionId", "metadata"]);

/** Checks each equality value of `entries` (named `field.key`) and returns how many there are. */
function countValues(entries: Record<string, unknown>, field: string): number {
  let count = 0;
  for (const [key, value] of Object.entries(entries)) {
    if (typeof value === "string" && value.length > MAX_FILTER_VALUE_CHARS) {
      throw badRequest(`${field}.${key}: is ${value.length} characters; the limit is ${MAX_FILTER_VALUE_CHARS}`);
    }
    count++;
  }
  return count;
}

/** Fails with a 400 naming `field` when a request carries more than `MAX_FILTER_KEYS` equality filters. */
export function checkFilterCount(count: number, field: string): void {
  if (count > MAX_FILTER_KEYS) throw badRequest(`${field}: has ${count} filter keys; the limit is ${MAX_FILTER_KEYS}`);
}

/**
 * Checks an API `filters` object (memory-style: workspaceId, session_id, metadata keys
 * in `metadata` or as extra keys) before it is mapped: aliases that differ are a 400,
 * and its equality keys are counted (see `checkFilterCount`). Returns the count and the
 * workspace and session it names.
 */
export function inspectFilters(filters: ApiFilters | undefined, field: string) {
  if (!filters) return { count: 0, workspaceId: undefined, sessionId: undefined };
  const workspaceId = oneOf<string>(filters, ["workspaceId", "workspace_id"], `${field}.`);
  const sessionId = oneOf<string>(filters, ["session_id", "sessionId"], `${field}.`);
  const extra = Object.fromEntries(Object.entries(filters).filter(([key]) => !NAMED_KEYS.has(key)));
  const count = countValues(extra, field) + countValues(filters.metadata ?? {}, `${field}.metadata`);
  return { count, workspaceId, sessionId };
}

/**
 * The documents query's `filter`: only the `eq` operator exists; anything else (`ne`, or
 * a key such as `document_type` put beside `eq`) is a 400 naming it, never ignored.
 * Returns the document type it asks for, its metadata equalities and their count.
 */
export function inspectQueryFilter(filter: Record<string, unknown> | undefined) {
  if (!filter) return { count: 0, documentType: undefined, metadata: {} };
  for (const key of Object.keys(filter)) {
    if (key === "eq") continue;
    throw badRequest(`filter.${key}: is not a filter operator; the one supported is eq (e.g. {"eq": {"document_type": "note"}})`);
  }
  const eq = (filter.eq ?? {}) as Record<string, unknown>;
  const documentType = oneOf<string>(eq, ["document_type", "documentType"], "filter.eq.");
  const { document_type: _a, documentType: _b, ...metadata } = eq;
  const count = countValues(metadata, "filter.eq") + (documentType === undefined ? 0 : 1);
  return { count, documentType, metadata: metadata as Record<string, string | number | boolean | null> };
}

/** The workspace a search is scoped to, from the body and from its filters; two different ones are a 400. */
export function scopeWorkspace(body: { workspace_id?: string; workspaceId?: string }, fromFilters: string | undefined, filtersField: string) {
  const top = oneOf<string>(body, ["workspace_id", "workspaceId"]);
  return agree(
    { field: body.workspace_id !== undefined ? "workspace_id" : "workspaceId", value: top },
    { field: `${filtersField}.workspaceId`, value: fromFilters },
  );
}
