import type { Executor } from "../db/store";

/** What the search index holds: derived from SQLite, always rebuildable from it. */
export type SearchKind = "memory" | "block" | "message" | "file";

/** The fields every searchable unit has, whatever its source. */
export interface IndexedItem {
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
}

/**
 * The stored row an item was read from, when its source keeps it (`T`): search hits carry
 * it, so a caller need not read it again. A source that keeps none (`undefined`) adds nothing.
 */
type Carrying<T> = [T] extends [undefined] ? { record?: undefined } : { record: T };

/** One searchable unit (a memory, a document block, a chat message, a file chunk), with its source's row `T`. */
export type SearchItem<T = undefined> = IndexedItem & Carrying<T>;

/** Identifies a source across owners: the unit the outbox and the index replace. */
export interface SourceRef {
  ownerId: string;
  kind: SearchKind;
  sourceId: string;
}

/**
 * A domain that feeds the index, for one kind. `load` returns the current items of each
 * source that still exists (a missing source is removed from the index), keyed by
 * `sourceKey`; without `context` it may skip the neighbouring text (the search engine
 * re-checks hits against the store of record that way). `listAll` enumerates every source
 * for a rebuild. `T` is the stored row its items carry, which its hits then carry typed.
 */
export interface SearchSource<T = undefined, K extends SearchKind = SearchKind> {
  kind: K;
  load(tx: Executor, refs: SourceRef[], options?: { context?: boolean }): Promise<Map<string, SearchItem<T>[]>>;
  listAll(tx: Executor): AsyncIterable<SourceRef>;
}

/** An item whatever row its source keeps: what the index writer and the engine handle. */
export type AnyItem = IndexedItem & { record?: unknown };

/** A source of kind `K`, whatever row its items carry. */
export interface AnySearchSource<K extends SearchKind = SearchKind> {
  kind: K;
  load(tx: Executor, refs: SourceRef[], options?: { context?: boolean }): Promise<Map<string, AnyItem[]>>;
  listAll(tx: Executor): AsyncIterable<SourceRef>;
}

/** The sources of the index, at most one per kind. */
export type SearchSources = { [K in SearchKind]?: AnySearchSource<K> };

/** The row type each kind's hits carry, as its source's items declare it. */
export type RecordsOf<S extends SearchSources> = { [K in keyof S & SearchKind]: RowOf<S[K]> };
type RowOf<S> = S extends { load(...args: never[]): Promise<Map<string, Array<infer I>>> }
  ? I extends { record: infer T }
    ? T
    : undefined
  : never;

/** What each kind's hits carry (`unknown`: the caller does not look at records). */
export type SearchRecords = Partial<Record<SearchKind, unknown>>;

/** Filters that every search may carry; all are equality tests. */
export interface SearchFilters {
  workspaceId?: string;
  /** With `workspaceId`: also match items that belong to no workspace (personal memories). */
  includeUnscoped?: boolean;
  /** Only items that belong to no workspace (personal memories); not with `workspaceId`. */
  unscopedOnly?: boolean;
  sessionId?: string;
  documentType?: string;
  metadata?: Record<string, string | number | boolean | null>;
  /** Restrict to these sources (e.g. one thread). */
  sourceIds?: string[];
}

/**
 * A ranking signal a search may use: `text` full-text (BM25), `words` the word-vector layer,
 * `time` the query's time expressions against when items happened, `vector` the embedding
 * model's vectors. Asked for by the recall bench's ablations.
 */
export type SearchSignal = "text" | "words" | "time" | "vector";
export const SEARCH_SIGNALS: readonly SearchSignal[] = ["text", "words", "time", "vector"];
/** One hit's score by each signal that took part in its query, each in [0, 1]. */
export type HitSignals = Partial<Record<SearchSignal, number>>;

export interface SearchRequest<K extends SearchKind = SearchKind> {
  ownerId: string;
  query: string;
  kinds: K[];
  filters?: SearchFilters;
  limit: number;
  /** Drop hits scoring below this (scores are in [0, 1]). */
  minScore?: number;
  /**
   * A `performance.now()` time that bounds the whole search (waiting for the index,
   * embedding the query); past it the search answers from the index as it is.
   */
  deadline?: number;
  /** Rank with these signals only (ablations); all that are available when absent. */
  signals?: SearchSignal[];
}

/** One hit of kind `K`, with the row its source read back (`T`; see `SearchItem`). */
export interface SearchHit<T = unknown, K extends SearchKind = SearchKind> {
  kind: K;
  sourceId: string;
  itemId: string;
  workspaceId: string | null;
  text: string;
  score: number;
  /** The hit's score by each signal that took part (the fused `score` is their weighted mean). */
  signals: HitSignals;
  /** The source's stored row, read back by this search (see `SearchItem`). */
  record: T;
}

/** The hits of the kinds `K`, each with its own kind's record type (a union by kind). */
export type HitOf<R extends SearchRecords, K extends SearchKind & keyof R> = K extends SearchKind
  ? SearchHit<R[K], K>
  : never;

/** `semantic` when vectors took part in ranking, `fulltext_fallback` otherwise (docs/retrieval.md#ranking). */
export type SearchMode = "semantic" | "fulltext_fallback";
export type SearchStrategy = "hybrid" | "vector" | "fulltext";

export interface SearchResult<H = SearchHit> {
  hits: H[];
  mode: SearchMode;
  strategy: SearchStrategy;
  /** The signals that ranked: full text, word vectors, dates in the query, the embedding model's vectors. */
  signals: readonly SearchSignal[];
}

/**
 * The current items of these sources, read through each kind's source (a source that no
 * longer exists has none); `context: false` skips the neighbouring text.
 */
export async function loadSourceItems(
  db: Executor,
  sources: SearchSources,
  refs: SourceRef[],
  options?: { context?: boolean },
): Promise<AnyItem[]> {
  const byKind = new Map<SearchKind, SourceRef[]>();
  for (const ref of refs) (byKind.get(ref.kind) ?? byKind.set(ref.kind, []).get(ref.kind)!).push(ref);
  const items: AnyItem[] = [];
  for (const [kind, kindRefs] of byKind) {
    const source = sources[kind];
    if (!source) continue;
    for (const list of (await source.load(db, kindRefs, options)).values()) items.push(...list);
  }
  return items;
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
