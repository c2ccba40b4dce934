import type { RawHit } from "./lance-store";
import type { SearchHit, SearchKind } from "./types";

/**
 * Scores in [0, 1] that mean the same across queries, so a `minScore` threshold works:
 * - text: BM25 squashed by `bm25 / (bm25 + TEXT_HALF)`; a BM25 of TEXT_HALF scores 0.5;
 * - vector: cosine similarity, clamped at 0;
 * - hybrid: a weighted blend of the two, each hit taking 0 for a list it is absent from.
 */
const TEXT_HALF = 6;
const VECTOR_WEIGHT = 0.6;

export const textScore = (bm25: number) => (bm25 > 0 ? bm25 / (bm25 + TEXT_HALF) : 0);
export const vectorScore = (cosineDistance: number) => Math.max(0, Math.min(1, 1 - cosineDistance));

/** A ranked hit before its text and workspace are read from the store of record. */
export type RankedHit = Omit<SearchHit, "text" | "workspaceId">;

/** Fuses full-text and vector hits into one list, best first, ties broken by recency (then by key, so the order is stable). */
export function fuse(textHits: RawHit[], vectorHits: RawHit[] | null, limit: number): RankedHit[] {
  const byKey = new Map<string, { hit: RawHit; text: number; vector: number }>();
  const keyOf = (h: RawHit) => `${h.kind}|${h.source_id}|${h.item_id}`;
  for (const hit of textHits) {
    const key = keyOf(hit);
    const score = textScore(hit._score ?? 0);
    const seen = byKey.get(key);
    if (!seen || seen.text < score) byKey.set(key, { hit, text: score, vector: seen?.vector ?? 0 });
  }
  for (const hit of vectorHits ?? []) {
    const key = keyOf(hit);
    const score = vectorScore(hit._distance ?? 1);
    const seen = byKey.get(key);
    if (seen) seen.vector = Math.max(seen.vector, score);
    else byKey.set(key, { hit, text: 0, vector: score });
  }
  const blended = [...byKey.values()].map(({ hit, text, vector }) => ({
    hit,
    score: vectorHits === null ? text : VECTOR_WEIGHT * vector + (1 - VECTOR_WEIGHT) * text,
  }));
  blended.sort((a, b) => b.score - a.score || b.hit.created_at - a.hit.created_at || (keyOf(a.hit) < keyOf(b.hit) ? -1 : 1));
  return blended.slice(0, limit).map(({ hit, score }) => ({
    kind: hit.kind as SearchKind,
    sourceId: hit.source_id,
    itemId: hit.item_id,
    score: Math.round(score * 1e6) / 1e6,
  }));
}
