import type { Logger } from "../lib/log";
import type { Embedder } from "./embedders/embedder";
import { buildWhere } from "./filters";
import type { Indexer } from "./indexer";
import type { LanceStore } from "./lance-store";
import { fullTextQuery } from "./query-text";
import { fuse } from "./ranking";
import type { SearchRequest, SearchResult } from "./types";

export interface SearchEngineOptions {
  lance: LanceStore;
  indexer: Indexer;
  embedder: Embedder | null;
  log: Logger;
  /** How long a search waits for the query embedding before going full-text only. */
  queryEmbedTimeoutMs: number;
}

const CANDIDATES_PER_RESULT = 4;
const MAX_CANDIDATES = 200;
const QUERY_CACHE_SIZE = 512;

/** Where a search spent its time, in milliseconds (sent as `Server-Timing`). */
export interface SearchTimings {
  flush: number;
  embed: number;
  search: number;
}

/**
 * The one search engine: memories, document blocks, chat messages and files all go
 * through `search`. Full-text candidates and (query embedding → vector candidates) run
 * concurrently within the caller's filter and are fused (see ranking.ts).
 */
export function createSearchEngine({ lance, indexer, embedder, log, queryEmbedTimeoutMs }: SearchEngineOptions) {
  // Recent query vectors: the chat proxy and retries ask the same question again.
  const queryVectors = new Map<string, Float32Array>();

  async function embedQuery(query: string): Promise<Float32Array | null> {
    if (!embedder || !query.trim()) return null;
    const cached = queryVectors.get(query);
    if (cached) return cached;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), queryEmbedTimeoutMs)));
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

  return {
    async search(request: SearchRequest): Promise<SearchResult & { timings: SearchTimings }> {
      const started = performance.now();
      await indexer.flush(request.ownerId);
      const flushed = performance.now();
      const where = buildWhere(request.ownerId, request.kinds, request.filters);
      const candidates = Math.min(MAX_CANDIDATES, Math.max(request.limit * CANDIDATES_PER_RESULT, 20));
      const vectorTable = indexer.vectorTable;
      let embedMs = 0;
      const vectorSearch = async () => {
        if (!vectorTable) return null;
        const embedStarted = performance.now();
        const vector = await embedQuery(request.query);
        embedMs = performance.now() - embedStarted;
        return vector ? lance.searchVectors(vectorTable, where, vector, candidates) : null;
      };
      const [textHits, vectorHits] = await Promise.all([lance.searchText(where, fullTextQuery(request.query), candidates), vectorSearch()]);
      const hits = fuse(textHits, vectorHits, request.limit).filter((hit) => hit.score > 0 && hit.score >= (request.minScore ?? 0));
      const semantic = vectorHits !== null;
      const finished = performance.now();
      return {
        hits,
        mode: semantic ? "semantic" : "fulltext_fallback",
        // Which lists ranked: both, or only the vectors when no query word matched any text.
        strategy: semantic ? (textHits.length ? "hybrid" : "vector") : "fulltext",
        timings: { flush: flushed - started, embed: embedMs, search: finished - flushed - embedMs },
      };
    },
  };
}
export type SearchEngine = ReturnType<typeof createSearchEngine>;

/** Renders timings as a `Server-Timing` header value. */
export const serverTiming = (t: SearchTimings) =>
  `flush;dur=${t.flush.toFixed(2)}, embed;dur=${t.embed.toFixed(2)}, search;dur=${t.search.toFixed(2)}`;
