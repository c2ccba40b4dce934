import type { RawHit } from "../lance/lance-schema";
import type { SearchKind } from "../types";

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

/** A fused hit before its text, workspace and time are read from the store of record; `score` is unrounded. */
export interface RankedHit {
  kind: SearchKind;
  sourceId: string;
  itemId: string;
  score: number;
  key: string;
}

const keyOf = (h: RawHit) => `${h.kind}|${h.source_id}|${h.item_id}`;

/**
 * Fuses full-text and vector hits into one list, best score first (equal scores by key).
 * Recency, the tie-break of the final order, is not in the index: see `contenders` and `order`.
 */
export function fuse(textHits: RawHit[], vectorHits: RawHit[] | null): RankedHit[] {
  const byKey = new Map<string, { hit: RawHit; text: number; vector: number }>();
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
  const fused = [...byKey].map(([key, { hit, text, vector }]) => ({
    kind: hit.kind as SearchKind,
    sourceId: hit.source_id,
    itemId: hit.item_id,
    key,
    score: vectorHits === null ? text : VECTOR_WEIGHT * vector + (1 - VECTOR_WEIGHT) * text,
  }));
  return fused.sort((a, b) => b.score - a.score || byKeyOrder(a, b));
}

const byKeyOrder = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/**
 * The hits of a score-sorted list that can end up among its first `count` once ties are
 * broken by recency: the first `count`, and every later one tied with the last of them.
 */
export function contenders<T extends { score: number }>(sorted: T[], count: number): T[] {
  if (sorted.length <= count) return sorted;
  let end = count;
  while (end < sorted.length && sorted[end].score === sorted[count - 1].score) end++;
  return sorted.slice(0, end);
}

/** The final order: best score first, ties to the newer item, then by key (a stable order); scores rounded. */
export function order<T extends RankedHit & { createdAtMs: number }>(hits: T[], limit: number): Array<Omit<T, "key" | "createdAtMs">> {
  return [...hits]
    .sort((a, b) => b.score - a.score || b.createdAtMs - a.createdAtMs || byKeyOrder(a, b))
    .slice(0, limit)
    .map(({ key: _, createdAtMs: __, ...hit }) => ({ ...hit, score: Math.round(hit.score * 1e6) / 1e6 }));
}
