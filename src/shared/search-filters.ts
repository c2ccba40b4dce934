import { t } from "elysia";
import { agree, oneOf } from "./aliases";
import { badRequest } from "./app-error";
import { Scalar } from "./schemas";

/**
 * The API's search `filters` object (memory search, context build, the documents query's
 * `metadata.filters`), its checks and its mapping onto the engine's equality filters.
 */

/** Conditions one search `filters` object may hold, counting the keys inside its `metadata`; also the cap per request. */
export const MAX_FILTER_KEYS = 32;
/** Characters of one string filter value: an equality test on metadata needs no more. */
export const MAX_FILTER_VALUE_CHARS = 1_024;

const Scope = t.String({ minLength: 1, maxLength: 256 });

export const SearchFilters = t.Object(
  {
    workspaceId: t.Optional(Scope),
    workspace_id: t.Optional(Scope),
    session_id: t.Optional(Scope),
    sessionId: t.Optional(Scope),
    metadata: t.Optional(t.Record(t.String({ minLength: 1 }), Scalar, { maxProperties: MAX_FILTER_KEYS })),
  },
  {
    additionalProperties: Scalar,
    // Counted before any key is validated or becomes a search condition.
    maxProperties: MAX_FILTER_KEYS,
    description:
      "workspaceId, session_id, and equality on metadata keys (in `metadata` or as extra keys); at most 32 keys in all",
  },
);
type ApiFilters = typeof SearchFilters.static;

type ScalarValue = string | number | boolean | null;
/** What the API's filters say, as the search engine's equality filters take them. */
export interface EqualityFilters {
  workspaceId?: string;
  sessionId?: string;
  metadata?: Record<string, ScalarValue>;
}

/** Keys of `filters` that are not metadata conditions. */
const NAMED_KEYS = new Set(["workspaceId", "workspace_id", "session_id", "sessionId", "metadata"]);

/**
 * Maps the API's filter object onto the engine's equality filters. `field` names the
 * object in errors (`filters`, or `metadata.filters` in the documents query).
 */
export function toSearchFilters(filters: ApiFilters | undefined, field = "filters"): EqualityFilters {
  if (!filters) return {};
  const metadata = filters.metadata ?? {};
  // Every key is one more condition on every candidate: the count is capped, the keys
  // inside `metadata` included (the schema caps each object on its own).
  const conditions = Object.keys(filters).length - (filters.metadata ? 1 : 0) + Object.keys(metadata).length;
  if (conditions > MAX_FILTER_KEYS) {
    throw badRequest(
      `${field}: has ${conditions} keys (counting those in ${field}.metadata); at most ${MAX_FILTER_KEYS} are allowed`,
    );
  }
  const merged = new Map(
    Object.entries(filters as Record<string, ScalarValue>).filter(([key]) => !NAMED_KEYS.has(key)),
  );
  // `{topic: "x"}` and `{metadata: {topic: "x"}}` are two spellings of one condition.
  for (const [key, value] of Object.entries(metadata)) {
    merged.set(
      key,
      agree(
        { field: `${field}.${key}`, value: merged.get(key) },
        { field: `${field}.metadata.${key}`, value },
      ) as ScalarValue,
    );
  }
  return {
    workspaceId: oneOf<string>(filters, ["workspaceId", "workspace_id"], `${field}.`),
    sessionId: oneOf<string>(filters, ["session_id", "sessionId"], `${field}.`),
    metadata: merged.size ? Object.fromEntries(merged) : undefined,
  };
}

/** Checks each equality value of `entries` (named `field.key`) and returns how many there are. */
export function countFilterValues(entries: Record<string, unknown>, field: string): number {
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
  const count = countFilterValues(extra, field) + countFilterValues(filters.metadata ?? {}, `${field}.metadata`);
  return { count, workspaceId, sessionId };
}

/** The workspace a search is scoped to, from the body and from its filters; two different ones are a 400. */
export function scopeWorkspace(
  body: { workspace_id?: string; workspaceId?: string },
  fromFilters: string | undefined,
  filtersField: string,
) {
  const top = oneOf<string>(body, ["workspace_id", "workspaceId"]);
  return agree(
    { field: body.workspace_id !== undefined ? "workspace_id" : "workspaceId", value: top },
    { field: `${filtersField}.workspaceId`, value: fromFilters },
  );
}
