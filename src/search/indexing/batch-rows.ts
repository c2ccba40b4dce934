// How one outbox batch becomes LanceDB rows and deletes, table by table (the index writer's arithmetic).
import { vectorKey, type SourceKeys } from "./embedding-cache-repository";
import { metaEntries } from "../lance/filters";
import type { IndexRow } from "../lance/lance-schema";
import { partitionGroup, textTable } from "../lance/partitions";
import type { OutboxRow } from "./outbox-repository";
import { sourceKey, type AnyItem, type SearchKind, type SourceRef } from "../types";

/** The cache keys each source of a batch uses now; a source without items (deleted) uses none. */
export function keysBySource(refs: SourceRef[], items: AnyItem[], keyOf: Map<AnyItem, string>): SourceKeys {
  const uses: SourceKeys = new Map(refs.map((ref) => [sourceKey(ref), []]));
  for (const item of items) uses.get(sourceKey(item))?.push(keyOf.get(item) ?? vectorKey(item.ownerId, item.text));
  return uses;
}

/**
 * The tables of a batch that lost rows of existing sources (changed or deleted, not a
 * replayed insert), each with the time of the batch's earliest change.
 */
export function deletedFrom(rows: OutboxRow[], parts: Map<string, { deleteKeys: string[] }>): Map<string, number> {
  const changed = new Set(
    rows
      .filter((row) => row.op !== "insert")
      .map((row) => sourceKey({ ownerId: row.ownerId, kind: row.kind as SearchKind, sourceId: row.sourceId })),
  );
  const at = Math.min(...rows.map((row) => row.createdAt));
  const tables = new Map<string, number>();
  for (const [table, part] of parts) if (part.deleteKeys.some((key) => changed.has(key))) tables.set(table, at);
  return tables;
}

/** A batch's deletes and items, split by the partition table each belongs to. */
export function byPartition(deletes: SourceRef[], items: AnyItem[], tableOf: (ref: SourceRef) => string) {
  const parts = new Map<string, { deleteKeys: string[]; items: AnyItem[] }>();
  const part = (table: string) => {
    let entry = parts.get(table);
    if (!entry) {
      entry = { deleteKeys: [], items: [] };
      parts.set(table, entry);
    }
    return entry;
  };
  for (const ref of deletes) part(tableOf(ref)).deleteKeys.push(sourceKey(ref));
  for (const item of items) part(tableOf(item)).items.push(item);
  return parts;
}

export function toIndexRow(item: AnyItem): IndexRow {
  return {
    source_key: sourceKey(item),
    owner_id: item.ownerId,
    kind: item.kind,
    source_id: item.sourceId,
    item_id: item.itemId,
    workspace_id: item.workspaceId,
    session_id: item.sessionId,
    document_type: item.documentType,
    meta: metaEntries(item.metadata),
    created_at: item.createdAtMs,
    text: item.text,
    context_before: item.contextBefore ?? "",
    context_after: item.contextAfter ?? "",
  };
}

/** A text batch's sources by full-text table (`kind|sourceId` → the newest outbox seq written): the writer's list (compaction-policy.ts). */
export function writtenByTable(rows: OutboxRow[]) {
  const written = new Map<string, Map<string, number>>();
  for (const row of rows) {
    const table = textTable(row.ownerId, partitionGroup(row.kind as SearchKind));
    const sources = written.get(table) ?? written.set(table, new Map()).get(table)!;
    const source = `${row.kind}|${row.sourceId}`;
    sources.set(source, Math.max(sources.get(source) ?? 0, row.seq));
  }
  return written;
}
