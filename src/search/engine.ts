import type { Logger } from "../lib/log";
import type { Embedder } from "./embedders/embedder";
import { buildWhere } from "./filters";
import type { Indexer } from "./indexer";
import type { LanceStore } from "./lance-store";
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

/**
 * The one search engine: memories, document blocks, chat messages and files all go
 * through `search`. Full-text and vector candidates are fetched in parallel within the
 * caller's filter and fused (see ranking.ts).
 */
export function createSearchEngine({ lance, indexer, embedder, log, queryEmbedTimeoutMs }: SearchEngineOptions) {
  async function embedQuery(query: string): Promise<Float32Array | null> {
    if (!embedder || !indexer.vectorTable || !query.trim()) return null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), queryEmbedTimeoutMs)));
      const vectors = await Promise.race([embedder.embed([query], "query"), timeout]);
      return vectors?.[0] ?? null;
    } catch (error) {
      log.debug("query embedding failed; full-text only", { reason: (error as Error).message });
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    async search(request: SearchRequest): Promise<SearchResult> {
      await indexer.flush(request.ownerId);
      const where = buildWhere(request.ownerId, request.kinds, request.filters);
      const candidates = Math.min(MAX_CANDIDATES, Math.max(request.limit * CANDIDATES_PER_RESULT, 20));
      const queryVector = await embedQuery(request.query);
      const vectorTable = indexer.vectorTable;
      const [textHits, vectorHits] = await Promise.all([
        lance.searchText(where, request.query, candidates),
        queryVector && vectorTable ? lance.searchVectors(vectorTable, where, queryVector, candidates) : Promise.resolve(null),
      ]);
      const hits = fuse(textHits, vectorHits, request.limit).filter((hit) => hit.score >= (request.minScore ?? 0) && hit.score > 0);
      const semantic = vectorHits !== null;
      return {
        hits,
        mode: semantic ? "semantic" : "fulltext_fallback",
        strategy: semantic ? (request.query.trim() ? "hybrid" : "vector") : "fulltext",
      };
    },
  };
}
export type SearchEngine = ReturnType<typeof createSearchEngine>;
