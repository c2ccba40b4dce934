import { FIELD_WEIGHTS, type FieldTerms, type ItemTerms } from "../analysis/item-terms";
import type { PartitionGroup } from "../lance/partitions";
import type { OwnStatistics } from "../indexing/term-stats";
import type { HitSignals, SearchSignal } from "../types";

/**
 * Exact scoring with the owner's own statistics, every signal in [0, 1], so scores mean
 * the same across queries and a `minScore` threshold works:
 * - text: BM25 (k1 1.2, b 0.5) squashed by `bm25 / (bm25 + TEXT_HALF)`; a BM25 of TEXT_HALF scores 0.5;
 * - words: the cosine of the query's and the item's word vectors (SIF means of GloVe
 *   vectors), clamped at 0;
 * - time: how well the item's time fits the dates the query names (dates.ts `timeFit`);
 * - vector: the cosine of the embedding model's vectors, clamped at 0.
 * The score is the weighted mean of the signals that take part in the query (fuse), the
 * vector's weight scaled by how far this query's vector list agrees with its text (vectorTrust).
 */
export const BM25 = { k1: 1.2, b: 0.5 } as const;
const TEXT_HALF = 6;
/**
 * Each signal's weight in the mean, chosen on the development set (bench/recall.ts; the
 * figures are in docs/retrieval.md): text leads, the word vectors and the dates add to it,
 * the embedding model's vectors (when present) outweigh the text as before (0.6 : 0.4).
 */
export const SIGNAL_WEIGHTS: Record<SearchSignal, number> = { text: 1, words: 0.3, time: 0.5, vector: 1.5 };
/** An item that shares no term with the query is a hit only if its word vector is this close... */
export const WORDS_ALONE_COSINE = 0.35;
/** ...or its time fits the query's dates this well (0.5: within one range width of one). */
export const TIME_ALONE_FIT = 0.5;

/**
 * The fused score of one candidate, or null when it is no hit: the weighted mean over the
 * signals that take part in the query (`active`), a missing one counting 0. An item needs
 * a shared term, an embedding-model vector, or a close word vector or time to be a hit.
 */
export function fuse(active: readonly SearchSignal[], signals: HitSignals, vectorTrust = 1): number | null {
  const { text = 0, words = 0, time = 0, vector = 0 } = signals;
  if (!(text > 0 || (vector > 0 && vectorTrust > 0) || words >= WORDS_ALONE_COSINE || time >= TIME_ALONE_FIT))
    return null;
  let sum = 0;
  let weights = 0;
  for (const signal of active) {
    const weight = SIGNAL_WEIGHTS[signal] * (signal === "vector" ? vectorTrust : 1);
    sum += weight * (signals[signal] ?? 0);
    weights += weight;
  }
  return weights > 0 ? sum / weights : null;
}

/** Below this spread (max − min) of the vector scores, the embedding model tells the candidates apart by nothing. */
export const FLAT_VECTOR_SPREAD = 0.02;
/** The agreement (see vectorTrust) at which the vector signal gets its full weight; at 0.5 (chance) it gets none. */
export const FULL_TRUST_AGREEMENT = 0.7;

/**
 * How much the embedding model's signal may count in this query, in [0, 1]: a guard against
 * a model that ranks poorly (or a broken one answering constant or random vectors) drowning
 * the text. Judged on the query's own candidates, per query, against the text signal:
 * - no candidate matches the query's words: 1 (the vectors are all there is to go on);
 * - the vector scores are flat (spread below FLAT_VECTOR_SPREAD): 0;
 * - otherwise the agreement is the probability that one of the strong text matches (the
 *   upper half of the matches by text score) scores higher on the vector signal than any
 *   other candidate (a candidate the vector search did not return counts 0): 0.5 is chance
 *   (what a random model gives), 1 total agreement. It maps linearly from 0 at 0.5 to 1 at
 *   FULL_TRUST_AGREEMENT.
 * The cost is a sort of the candidates (bounded by the candidate count, not the corpus).
 */
export function vectorTrust(candidates: ReadonlyArray<{ text: number; vector: number }>): number {
  const matches = candidates
    .filter((c) => c.text > 0)
    .map((c) => c.text)
    .sort((a, b) => a - b);
  if (matches.length === 0) return 1;
  const present = candidates.filter((c) => c.vector > 0).map((c) => c.vector);
  if (present.length === 0) return 1;
  if (Math.max(...present) - Math.min(...present) < FLAT_VECTOR_SPREAD) return 0;
  const median = matches[Math.floor(matches.length / 2)];
  const strong: number[] = [];
  const rest: number[] = [];
  for (const { text, vector } of candidates) (text >= median ? strong : rest).push(vector);
  if (rest.length === 0) return 1;
  return Math.max(0, Math.min(1, (agreement(strong, rest) - 0.5) / (FULL_TRUST_AGREEMENT - 0.5)));
}

/** The probability that a value of `a` exceeds one of `b`, ties counting half (Mann–Whitney). */
function agreement(a: number[], b: number[]): number {
  a.sort((x, y) => x - y);
  b.sort((x, y) => x - y);
  let wins = 0;
  let below = 0;
  for (const value of a) {
    while (below < b.length && b[below] < value) below++;
    let tied = below;
    while (tied < b.length && b[tied] === value) tied++;
    wins += below + (tied - below) / 2;
  }
  return wins / (a.length * b.length);
}

/** One partition group's statistics as a search sees them. */
export interface GroupStats {
  items: number;
  length: number;
  df: Map<string, number>;
}

/** The owner's statistics per group searched (a group without items counts none). */
export function groupStatistics(groups: PartitionGroup[], own: OwnStatistics): Map<PartitionGroup, GroupStats> {
  const stats = new Map<PartitionGroup, GroupStats>();
  for (const group of groups) {
    const corpus = own.corpus.get(group);
    stats.set(group, { items: corpus?.items ?? 0, length: corpus?.length ?? 0, df: own.df.get(group) ?? new Map() });
  }
  return stats;
}

/**
 * The two factors of a term's BM25 in one group: the idf of each query term, and a field's
 * count saturated against its length. An item of text alone that holds query term i `tf`
 * times in a text of `length` terms gets `idf[i] * saturate(tf, length)` from it, exactly
 * what `bm25Scorer` adds for that term.
 */
export function bm25Parts(
  queryTerms: readonly string[],
  stats: GroupStats,
): { idf: number[]; saturate: (tf: number, length: number) => number } {
  const items = Math.max(stats.items, 1);
  const average = stats.length > 0 ? stats.length / items : 1;
  const idf = queryTerms.map((term) => {
    const df = Math.min(items, Math.max(1, stats.df.get(term) ?? 0));
    return Math.log(1 + (items - df + 0.5) / (df + 0.5));
  });
  const saturate = (tf: number, length: number) =>
    (tf * (BM25.k1 + 1)) / (tf + BM25.k1 * (1 - BM25.b + (BM25.b * length) / average));
  return { idf, saturate };
}

/**
 * BM25 of items for the query terms, field by field as the index's multi-column match
 * does: the item's text, and the conversation around it with its lower weights, each
 * saturated against its own length (the owner's text statistics for all three). Each
 * term's idf and the average length are worked out once per query and group (`parts`,
 * when the caller has them already).
 */
export function bm25Scorer(
  queryTerms: readonly string[],
  stats: GroupStats,
  parts = bm25Parts(queryTerms, stats),
): (item: ItemTerms) => number {
  const { idf, saturate } = parts;
  const saturated = (field: FieldTerms | null, term: string) => {
    const tf = field?.counts.get(term) ?? 0;
    return tf ? saturate(tf, field!.length) : 0;
  };
  return (item) => {
    let score = 0;
    for (let i = 0; i < queryTerms.length; i++) {
      const term = queryTerms[i];
      const tf =
        saturated(item.text, term) +
        FIELD_WEIGHTS.before * saturated(item.before, term) +
        FIELD_WEIGHTS.after * saturated(item.after, term);
      if (tf) score += idf[i] * tf;
    }
    return score;
  };
}

export const textScore = (bm25Score: number) => (bm25Score > 0 ? bm25Score / (bm25Score + TEXT_HALF) : 0);
export const wordsScore = (cosine: number) => Math.max(0, Math.min(1, cosine));
export const vectorScore = (cosineDistance: number) => Math.max(0, Math.min(1, 1 - cosineDistance));
