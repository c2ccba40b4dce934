import { GROUP_KINDS, partitionGroup } from "./partitions";
import type { SearchFilters, SearchKind } from "../types";

/**
 * The only place that writes LanceDB `where()` text. Every value reaches it through
 * `literal`, which quotes and escapes, so user input can never change the filter.
 */
export function literal(value: string): string {
  // SQL string literal: single quotes doubled; NUL cannot appear in a literal.
  return `'${value.replace(/\u0000/g, "").replace(/'/g, "''")}'`;
}

/** Encodes one metadata entry as stored in the `meta` list column. */
export function metaEntry(key: string, value: unknown): string {
  return `${key}=${JSON.stringify(value)}`;
}

/** Flattens scalar metadata into `key=json` entries; nested values are not filterable. */
export function metaEntries(metadata: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(metadata)) {
    if (value === null || ["string", "number", "boolean"].includes(typeof value)) out.push(metaEntry(key, value));
  }
  return out;
}

/**
 * The filter of one search within an owner's partition table (the table itself scopes
 * the owner): the kinds, unless they are all the table holds, and the caller's
 * filters. Null when nothing narrows the search.
 */
export function partitionWhere(kinds: SearchKind[], filters: SearchFilters = {}): string | null {
  const clauses: string[] = [];
  const group = GROUP_KINDS[partitionGroup(kinds[0])];
  if (!group.every((kind) => kinds.includes(kind))) {
    clauses.push(kinds.length === 1 ? `kind = ${literal(kinds[0])}` : `kind IN (${kinds.map(literal).join(", ")})`);
  }
  if (filters.workspaceId !== undefined) {
    const inWorkspace = `workspace_id = ${literal(filters.workspaceId)}`;
    clauses.push(filters.includeUnscoped ? `(${inWorkspace} OR workspace_id IS NULL)` : inWorkspace);
  }
  if (filters.unscopedOnly) clauses.push("workspace_id IS NULL");
  if (filters.sessionId !== undefined) clauses.push(`session_id = ${literal(filters.sessionId)}`);
  if (filters.documentType !== undefined) clauses.push(`document_type = ${literal(filters.documentType)}`);
  if (filters.sourceIds) {
    clauses.push(filters.sourceIds.length ? `source_id IN (${filters.sourceIds.map(literal).join(", ")})` : "false");
  }
  for (const [key, value] of Object.entries(filters.metadata ?? {})) {
    clauses.push(`array_has(meta, ${literal(metaEntry(key, value))})`);
  }
  return clauses.length ? clauses.join(" AND ") : null;
}

/** Filter matching every item of the given sources (for replacing them). */
export function whereSourceKeys(keys: string[]): string {
  return `source_key IN (${keys.map(literal).join(", ")})`;
}

/**
 * Whether an item read from the store of record (not yet indexed) passes the same filter
 * `partitionWhere` gives LanceDB: a search treats both the same.
 */
export function itemMatches(
  item: {
    kind: SearchKind;
    sourceId: string;
    workspaceId: string | null;
    sessionId: string | null;
    documentType: string | null;
    metadata: Record<string, unknown>;
  },
  kinds: readonly SearchKind[],
  filters: SearchFilters = {},
): boolean {
  if (!kinds.includes(item.kind)) return false;
  if (
    filters.workspaceId !== undefined &&
    item.workspaceId !== filters.workspaceId &&
    !(filters.includeUnscoped && item.workspaceId === null)
  )
    return false;
  if (filters.unscopedOnly && item.workspaceId !== null) return false;
  if (filters.sessionId !== undefined && item.sessionId !== filters.sessionId) return false;
  if (filters.documentType !== undefined && item.documentType !== filters.documentType) return false;
  if (filters.sourceIds && !filters.sourceIds.includes(item.sourceId)) return false;
  const entries = Object.entries(filters.metadata ?? {});
  if (entries.length) {
    const stored = new Set(metaEntries(item.metadata));
    if (!entries.every(([key, value]) => stored.has(metaEntry(key, value)))) return false;
  }
  return true;
}

/** Items created within `[from, to)` (ms since the epoch), added to a partition filter. */
export function withinTime(where: string | null, from: number, to: number): string {
  const range = `created_at >= ${Math.floor(Number(from))} AND created_at < ${Math.ceil(Number(to))}`;
  return where ? `(${where}) AND ${range}` : range;
}
