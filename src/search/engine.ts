import type { Store } from "../db/store";
import type { Logger } from "../lib/log";
import type { Embedder } from "./embedders/embedder";
import { buildWhere } from "./filters";
import type { Indexer } from "./indexer";
import type { LanceStore } from "./lance-store";
import { fullTextQuery } from "./query-text";
import { fuse } from "./ranking";
import { sourceKey, type SearchHit, type SearchKind, type SearchRequest, type SearchResult, type SearchSource, type SourceRef } from "./types";

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
}

const CANDIDATES_PER_RESULT = 4;
const MAX_CANDIDATES = 200;
const QUERY_CACHE_SIZE = 512;
/** Hits fused beyond the limit, so that hits dropped by the store re-check rarely shorten the list. */
const VERIFY_SPARE = 5;

/** Where a search spent its time, in milliseconds (sent as `Server-Timing`). */
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
export function createSearchEngine({ store, lance, indexer, sources, embedder, log, queryEmbedTimeoutMs, searchWaitMs }: SearchEngineOptions) {
  // Recent query vectors: the chat proxy and retries ask the same question again.
  const queryVectors = new Map<string, Float32Array>();

  async function embedQuery(query: string, timeoutMs: number): Promise<Float32Array | null> {
    if (!embedder || !query.trim() || timeoutMs <= 0) return null;
    const cached = queryVectors.get(query);
    if (cached) return cached;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs)));
      const vector = (await Promise.race([embedder.embed([query], "query"), timeout]))?.[0] ?? null;
      if (vector) {
        if (queryVectors.size >= QUERY_CACHE_SIZE) queryVectors.delete(queryVectors.keys().next().value!);
        queryVectors.set(query, vector);
      }
      return vector;
    } catch (error) {
      log.debug("query embedding failed; full-text only", { reason: (error as Error).message });
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Keeps the hits whose item still exists for this owner with the text the index returned. */
  async function verify(ownerId: string, hits: SearchHit[]): Promise<SearchHit[]> {
    const byKind = new Map<SearchKind, SourceRef[]>();
    for (const hit of hits) {
      const refs = byKind.get(hit.kind) ?? [];
      refs.push({ ownerId, kind: hit.kind, sourceId: hit.sourceId });
      byKind.set(hit.kind, refs);
    }
    const current = new Map<string, string>();
    for (const [kind, refs] of byKind) {
      const source = sources.get(kind);
      if (!source) continue;
      for (const [key, items] of await source.load(store.db, refs, { context: false })) {
        for (const item of items) current.set(`${key}|${item.itemId}`, item.text);
      }
    }
    return hits.filter((hit) => current.get(`${sourceKey({ ownerId, kind: hit.kind, sourceId: hit.sourceId })}|${hit.itemId}`) === hit.text);
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
      const flushed = await indexer.flush(request.ownerId, Math.max(0, Math.min(searchWaitMs, remaining())));
      // A replica that does not write the index looks at its newest version.
      await indexer.followWriter();
      const afterFlush = performance.now();
      const where = buildWhere(request.ownerId, request.kinds, request.filters);
      const candidates = Math.min(MAX_CANDIDATES, Math.max(request.limit * CANDIDATES_PER_RESULT, 20));
      const vectorTable = indexer.vectorTable;
      let embedMs = 0;
      const vectorSearch = async () => {
        if (!vectorTable) return null;
        const embedStarted = performance.now();
        const vector = await embedQuery(request.query, Math.min(queryEmbedTimeoutMs, remaining()));
        embedMs = performance.now() - embedStarted;
        return vector ? lance.searchVectors(vectorTable, where, vector, candidates) : null;
      };
      const [textHits, vectorHits] = await Promise.all([lance.searchText(where, fullTextQuery(request.query), candidates), vectorSearch()]);
      const fused = fuse(textHits, vectorHits, request.limit + VERIFY_SPARE).filter((hit) => hit.score > 0 && hit.score >= (request.minScore ?? 0));
      const hits = (await verify(request.ownerId, fused)).slice(0, request.limit);
      const semantic = vectorHits !== null;
      const finished = performance.now();
      return {
        hits,
        mode: semantic ? "semantic" : "fulltext_fallback",
        // Which lists ranked: both, or only the vectors when no query word matched any text.
        strategy: semantic ? (textHits.length ? "hybrid" : "vector") : "fulltext",
        timings: { flush: afterFlush - started, embed: embedMs, search: finished - afterFlush - embedMs },
        indexLag: flushed.lag,
      };
    },
  };
}
export type SearchEngine = ReturnType<typeof createSearchEngine>;

/** Renders timings as a `Server-Timing` header value. */
export const serverTiming = (t: SearchTimings) =>
  `flush;dur=${t.flush.toFixed(2)}, embed;dur=${t.embed.toFixed(2)}, search;dur=${t.search.toFixed(2)}`;

/** Response headers of a search: timings, and the index lag when the search could not wait for it all. */
export function searchHeaders(result: { timings: SearchTimings; indexLag: number }): Record<string, string> {
  const headers: Record<string, string> = { "server-timing": serverTiming(result.timings) };
  if (result.indexLag > 0) headers["x-svc-index-lag"] = String(result.indexLag);
  return headers;
}
