import { createHash } from "node:crypto";
import type { Logger } from "../../lib/log";
import type { Embedder } from "../embedders/embedder";

/** Query vectors kept, across all owners (512 × 384 floats ≈ 0.8 MB; keys are fixed-size hashes). */
const QUERY_CACHE_SIZE = 512;

/**
 * Query embeddings within a time limit, with the recent ones kept: the chat proxy and
 * retries ask the same question again. Keyed by owner and query: a cache shared across
 * users would answer B's search for X faster when A had searched X, telling B what A
 * searched.
 */
export function createQueryVectors(embedder: Embedder | null, log: Logger) {
  const queryVectors = new Map<string, Float32Array>();
  const queryKey = (ownerId: string, query: string) =>
    createHash("sha256").update(`${ownerId.length}:${ownerId}|${query}`).digest("base64url");

  /** The query's vector, or null (no embedder, a blank query, no time left, the embedder failed or was too slow). */
  return async function embedQuery(ownerId: string, query: string, timeoutMs: number): Promise<Float32Array | null> {
    if (!embedder || !query.trim() || timeoutMs <= 0) return null;
    const key = queryKey(ownerId, query);
    const cached = queryVectors.get(key);
    if (cached) {
      // Least recently used goes first: a hit moves to the back.
      queryVectors.delete(key);
      queryVectors.set(key, cached);
      return cached;
    }
    // A request's own time limit, cleared when it answers: no background work.
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
  };
}
