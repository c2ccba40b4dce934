import { createHash } from "node:crypto";
import type { Store } from "../../db/store";
import type { Logger } from "../../lib/log";
import type { ContextFlags } from "../indexing/context-flags";
import type { Embedder } from "../embedders/embedder";
import { partitionWhere } from "../lance/filters";
import type { Indexer } from "../indexing/indexer";
import type { RawHit } from "../lance/lance-schema";
import type { LanceStore } from "../lance/lance-store";
import { partitionGroup, textTable, type PartitionGroup } from "../lance/partitions";
import { fullTextQuery } from "./query-text";
import { contenders, fuse, order, type RankedHit } from "./ranking";
import { sourceKey, type SearchHit, type SearchItem, type SearchKind, type SearchRequest, type SearchResult, type SearchSource, type SourceRef } from "../types";

export interface SearchEngineOptions {
  store: Store;
  lance: LanceStore;
  indexer: Indexer;
  sources: Map<SearchKind, SearchSource>;
  embedder: Embedder | null;
  log: Logger;
  /** The longest a search waits for the query embedding before going full-text only. */
  queryEmbedTimeoutMs: number;
  /** The longest a search waits for the caller's own pending writes to reach the index. */
  searchWaitMs: number;
  contextFlags: ContextFlags;
}

const CANDIDATES_PER_RESULT = 4;
const MAX_CANDIDATES = 200;
/** Query vectors kept, across all owners (512 × 384 floats ≈ 0.8 MB; keys are fixed-size hashes). */
const QUERY_CACHE_SIZE = 512;
/** Candidates read back beyond the gap when hits were dropped by the store read-back (deleted since indexed). */
const VERIFY_SPARE = 5;

/** Where a search spent its time, in milliseconds (logged at debug level; see `serverTiming`). */
export interface SearchTimings {
  flush: number;
  embed: number;
  search: number;
}

/**
 * The one search engine: memories, document blocks, chat messages and files all go
 * through `search`. Full-text candidates and (query embedding → vector candidates) run
 * concurrently within the caller's filter and are fused (see ranking.ts); every hit is
 * then checked against the store of record, so a deleted or changed source is never
 * answered from the index with its old text.
 */
export function createSearchEngine({ store, lance, indexer, sources, embedder, log, queryEmbedTimeoutMs, searchWaitMs, contextFlags }: SearchEngineOptions) {
  // Recent query vectors: the chat proxy and retries ask the same question again. Keyed
  // by owner and query: a cache shared across users would answer B's search for X
  // faster when A had searched X, telling B what A searched.
  const queryVectors = new Map<string, Float32Array>();
  // The index writer's searches of memory tables read no column back (lance-store.ts).
  lance.useRowKeysWhile(() => indexer.isWriter);
  const queryKey = (ownerId: string, query: string) => createHash("sha256").update(`${ownerId.length}:${ownerId}|${query}`).digest("base64url");

  async function embedQuery(ownerId: string, query: string, timeoutMs: number): Promise<Float32Array | null> {
    if (!embedder || !query.trim() || timeoutMs <= 0) return null;
    const key = queryKey(ownerId, query);
    const cached = queryVectors.get(key);
    if (cached) {
      // Least recently used goes first: a hit moves to the back.
      queryVectors.delete(key);
      queryVectors.set(key, cached);
      return cached;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs)));
      const vector = (await Promise.race([embedder.embed([query], "query"), timeout]))?.[0] ?? null;
      if (vector) {
        if (queryVectors.size >= QUERY_CACHE_SIZE) queryVectors.delete(queryVectors.keys().next().value!);
        queryVectors.set(key, vector);
      }
      return vector;
    } catch (error) {
      log.debug("query embedding failed; full-text only", { reason: (error as Error).message });
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Reads each hit's item back from the store of record, for this owner: the text,
   * workspace and time answered are the current ones, and a hit whose item was deleted
   * since it was indexed is dropped.
   */
  async function hydrate(ownerId: string, hits: RankedHit[]): Promise<Array<RankedHit & SearchHit & { createdAtMs: number }>> {
    const byKind = new Map<SearchKind, SourceRef[]>();
    for (const hit of hits) {
      const refs = byKind.get(hit.kind) ?? [];
      refs.push({ ownerId, kind: hit.kind, sourceId: hit.sourceId });
      byKind.set(hit.kind, refs);
    }
    const current = new Map<string, SearchItem>();
    for (const [kind, refs] of byKind) {
      const source = sources.get(kind);
      if (!source) continue;
      for (const [key, items] of await source.load(store.db, refs, { context: false })) {
        for (const item of items) current.set(`${key}|${item.itemId}`, item);
      }
    }
    return hits.flatMap((hit) => {
      const item = current.get(`${sourceKey({ ownerId, kind: hit.kind, sourceId: hit.sourceId })}|${hit.itemId}`);
      return item ? [{ ...hit, text: item.text, workspaceId: item.workspaceId, createdAtMs: item.createdAtMs, record: item.record }] : [];
    });
  }

  /**
   * The hits of a fused list read back from the store: the first `limit` (and every one
   * tied with the last), then, while some were gone (deleted since they were indexed), the
   * next candidates to fill the gap. Reading spares up front cost every search a third
   * more rows for a case that is rare.
   */
  async function readBack(ownerId: string, fused: RankedHit[], limit: number) {
    let read = contenders(fused, limit);
    let hits = await hydrate(ownerId, read);
    while (hits.length < limit && read.length < fused.length) {
      const next = contenders(fused, read.length + (limit - hits.length) + VERIFY_SPARE).slice(read.length);
      read = read.concat(next);
      hits = hits.concat(await hydrate(ownerId, next));
    }
    return hits;
  }

  /** Full-text and vector candidates from the owner's partition tables of the kinds searched. */
  async function candidates(request: SearchRequest, count: number, remaining: () => number) {
    const byGroup = new Map<PartitionGroup, SearchKind[]>();
    for (const kind of request.kinds) byGroup.set(partitionGroup(kind), [...(byGroup.get(partitionGroup(kind)) ?? []), kind]);
    const query = fullTextQuery(request.query);
    let embedMs = 0;
    let vector: Promise<Float32Array | null> | null = null;
    const queryVector = () =>
      (vector ??= (async () => {
        const started = performance.now();
        const result = await embedQuery(request.ownerId, request.query, Math.min(queryEmbedTimeoutMs, remaining()));
        embedMs = performance.now() - started;
        return result;
      })());
    const perGroup = await Promise.all(
      [...byGroup].map(async ([group, kinds]) => {
        const where = partitionWhere(kinds, request.filters);
        const table = textTable(request.ownerId, group);
        const vectors = indexer.vectorTableFor(request.ownerId, group);
        const [text, near] = await Promise.all([
          contextFlags.has(table).then((context) => {
            const indexedOnly = indexer.fullyIndexed(table);
            indexer.noteSearch(table);
            return lance.searchText(table, where, query, count, { context, memories: group === "mem", indexedOnly });
          }),
          vectors ? queryVector().then((v) => (v ? lance.searchVectors(vectors, where, v, count, { memories: group === "mem" }) : null)) : Promise.resolve(null),
        ]);
        return { text, near };
      }),
    );
    const textHits = perGroup.flatMap((g) => g.text);
    const vectorLists = perGroup.map((g) => g.near).filter((list): list is RawHit[] => list !== null);
    return { textHits, vectorHits: vectorLists.length ? vectorLists.flat() : null, embedMs: () => embedMs };
  }

  return {
    /**
     * Searches one owner's items. `deadline` (a `performance.now()` time) bounds the
     * whole search: waiting for the index, embedding the query; past it the search
     * answers from the index as it is and `indexLag` says how many of the owner's
     * writes it could not see yet.
     */
    async search(request: SearchRequest & { deadline?: number }): Promise<SearchResult & { timings: SearchTimings; indexLag: number }> {
      const started = performance.now();
      const remaining = () => (request.deadline === undefined ? Infinity : request.deadline - performance.now());
      // Only the kinds searched: a memory search does not wait for a document's blocks.
      const flushed = await indexer.flush(request.ownerId, Math.max(0, Math.min(searchWaitMs, remaining())), request.kinds);
      // A replica that does not write the index looks at its newest version.
      await indexer.followWriter();
      const afterFlush = performance.now();
      const count = Math.min(MAX_CANDIDATES, Math.max(request.limit * CANDIDATES_PER_RESULT, 20));
      const { textHits, vectorHits, embedMs: embedTime } = await candidates(request, count, remaining);
      const embedMs = embedTime();
      const fused = fuse(textHits, vectorHits).filter((hit) => hit.score > 0 && hit.score >= (request.minScore ?? 0));
      // Ties go to the newer item, a time the index does not hold (one column less to read
      // per hit): every hit tied with the last candidate is read back too, then ordered.
      const hits: SearchHit[] = order(await readBack(request.ownerId, fused, request.limit), request.limit);
      const semantic = vectorHits !== null;
      const finished = performance.now();
      const timings = { flush: afterFlush - started, embed: embedMs, search: finished - afterFlush - embedMs };
      log.debug("search timings", { kinds: request.kinds.join(","), flushMs: round(timings.flush), embedMs: round(timings.embed), searchMs: round(timings.search) });
      return {
        hits,
        mode: semantic ? "semantic" : "fulltext_fallback",
        // Which lists ranked: both, or only the vectors when no query word matched any text.
        strategy: semantic ? (textHits.length ? "hybrid" : "vector") : "fulltext",
        timings,
        indexLag: flushed.lag,
      };
    },
  };
}
export type SearchEngine = ReturnType<typeof createSearchEngine>;

const round = (ms: number) => Math.round(ms * 100) / 100;

/**
 * Renders timings as a `Server-Timing` header value: the wait for the index and the
 * search itself, query embedding included. The embedding's own time stays in the debug
 * log: it says whether the query vector came from the cache, which no client needs (and
 * which told other users' searches apart while the cache was shared).
 */
export const serverTiming = (t: SearchTimings) => `flush;dur=${t.flush.toFixed(2)}, search;dur=${(t.embed + t.search).toFixed(2)}`;

/** Response headers of a search: timings, and the index lag when the search could not wait for it all. */
export function searchHeaders(result: { timings: SearchTimings; indexLag: number }): Record<string, string> {
  const headers: Record<string, string> = { "server-timing": serverTiming(result.timings) };
  if (result.indexLag > 0) headers["x-svc-index-lag"] = String(result.indexLag);
  return headers;
}
