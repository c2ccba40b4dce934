import type { Executor } from "../db/store";

/** What the search index holds: derived from SQLite, always rebuildable from it. */
export type SearchKind = "memory" | "block" | "message" | "file";

/** One searchable unit (a memory, a document block, a chat message, a file chunk). */
export interface SearchItem {
  ownerId: string;
  kind: SearchKind;
  /** The record the item derives from: memory id, document id, thread id, file id. */
  sourceId: string;
  /** Unique within the source: the memory id again, a block id, a message id. */
  itemId: string;
  workspaceId: string | null;
  sessionId: string | null;
  documentType: string | null;
  /** Scalar metadata for equality filters. */
  metadata: Record<string, unknown>;
  createdAtMs: number;
  text: string;
  /**
   * Text around the item, searched with lower weights than `text` and never returned:
   * what came just before it (the turn a reply answers) and just after it.
   */
  contextBefore?: string;
  contextAfter?: string;
  /** The stored row the item was read from, when the source keeps it: search hits carry it, so a caller need not read it again. */
  record?: unknown;
}

/** Identifies a source across owners: the unit the outbox and the index replace. */
export interface SourceRef {
  ownerId: string;
  kind: SearchKind;
  sourceId: string;
}

/**
 * A domain that feeds the index. `load` returns the current items of each source that
 * still exists (a missing source is removed from the index), keyed by `sourceKey`;
 * without `context` it may skip the neighbouring text (the search engine re-checks
 * hits against the store of record that way). `listAll` enumerates every source for a
 * rebuild.
 */
export interface SearchSource {
  kind: SearchKind;
  load(tx: Executor, refs: SourceRef[], options?: { context?: boolean }): Promise<Map<string, SearchItem[]>>;
  listAll(tx: Executor): AsyncIterable<SourceRef>;
}

/** Filters that every search may carry; all are equality tests. */
export interface SearchFilters {
  workspaceId?: string;
  /** With `workspaceId`: also match items that belong to no workspace (personal memories). */
  includeUnscoped?: boolean;
  sessionId?: string;
  documentType?: string;
  metadata?: Record<string, string | number | boolean | null>;
  /** Restrict to these sources (e.g. one thread). */
  sourceIds?: string[];
}

export interface SearchRequest {
  ownerId: string;
  query: string;
  kinds: SearchKind[];
  filters?: SearchFilters;
  limit: number;
  /** Drop hits scoring below this (scores are in [0, 1]). */
  minScore?: number;
}

export interface SearchHit {
  kind: SearchKind;
  sourceId: string;
  itemId: string;
  workspaceId: string | null;
  text: string;
  score: number;
  /** The source's stored row, read back by this search (see `SearchItem.record`). */
  record?: unknown;
}

/** `semantic` when vectors took part in ranking, `fulltext_fallback` otherwise (spec §4). */
export type SearchMode = "semantic" | "fulltext_fallback";
export type SearchStrategy = "hybrid" | "vector" | "fulltext";

export interface SearchResult {
  hits: SearchHit[];
  mode: SearchMode;
  strategy: SearchStrategy;
}

/** Source ids grouped by owner, for sources that load per owner. */
export function groupByOwner(refs: SourceRef[]): Map<string, string[]> {
  const byOwner = new Map<string, string[]>();
  for (const ref of refs) {
    const ids = byOwner.get(ref.ownerId);
    if (ids) ids.push(ref.sourceId);
    else byOwner.set(ref.ownerId, [ref.sourceId]);
  }
  return byOwner;
}

/** Key of a source in the index: length-prefixed, so no owner id can forge another's key. */
export const sourceKey = (ref: SourceRef) => `${ref.kind}|${ref.ownerId.length}|${ref.ownerId}|${ref.sourceId}`;
