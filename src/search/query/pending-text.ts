import type { PartitionGroup } from "../lance/partitions";
import type { PendingEntry, PendingView } from "./pending-index";
import { FIELD_WEIGHTS, type FieldTerms } from "../analysis/item-terms";
import { BM25, termBound, type GroupStats } from "./scoring";

/**
 * The `count` pending items that score best by text (BM25 with the owner's statistics,
 * ties by key), what LanceDB's full-text list gives of the indexed ones. Exact, without
 * scoring every match (MaxScore): the query's terms are taken rarest first, and once the
 * `count`-th best score reaches what an item holding none of the terms taken so far could
 * score at most, the items of the remaining (common) terms are not looked at.
 */
export function bestPendingByText(
  pending: PendingView,
  terms: readonly string[],
  statsOf: (entry: PendingEntry) => GroupStats,
  groupStats: Map<PartitionGroup, GroupStats>,
  accepts: (entry: PendingEntry) => boolean,
  count: number,
): PendingEntry[] {
  const score = scorer(terms, statsOf);
  const bound = (term: string) =>
    Math.max(...[...groupStats.values()].map((stats) => termBound(term, stats, pending.withContext)));
  const ordered = terms.map((term) => ({ term, bound: bound(term) })).sort((a, b) => b.bound - a.bound);
  // What an item first met at term i can score at most: the bounds of terms i and after.
  const rest = ordered.map((_, i) => ordered.slice(i).reduce((sum, t) => sum + t.bound, 0));
  const best: Array<{ entry: PendingEntry; score: number }> = [];
  const seen = new Set<string>();
  const worse = (a: { entry: PendingEntry; score: number }, b: { entry: PendingEntry; score: number }) =>
    a.score < b.score || (a.score === b.score && a.entry.key > b.entry.key);
  for (const [i, { term }] of ordered.entries()) {
    if (best.length >= count && best[best.length - 1].score > rest[i]) break;
    for (const entry of pending.holding(term)) {
      if (seen.has(entry.key)) continue;
      seen.add(entry.key);
      if (!accepts(entry)) continue;
      const scored = { entry, score: score(entry) };
      if (best.length >= count && !worse(best[best.length - 1], scored)) continue;
      // Kept sorted, best first: `count` is small (at most 200).
      let at = best.length;
      while (at > 0 && worse(best[at - 1], scored)) at--;
      best.splice(at, 0, scored);
      if (best.length > count) best.pop();
    }
  }
  return best.map((b) => b.entry);
}

/**
 * `bm25` (scoring.ts) for many items of one query: the same sums, with each term's idf and
 * each group's average length worked out once instead of per item.
 */
function scorer(terms: readonly string[], statsOf: (entry: PendingEntry) => GroupStats) {
  const prepared = new Map<GroupStats, { average: number; idf: number[] }>();
  const of = (stats: GroupStats) => {
    let p = prepared.get(stats);
    if (!p) {
      const items = Math.max(stats.items, 1);
      p = {
        average: stats.length > 0 ? stats.length / items : 1,
        idf: terms.map((term) => {
          const df = Math.min(items, Math.max(1, stats.df.get(term) ?? 0));
          return Math.log(1 + (items - df + 0.5) / (df + 0.5));
        }),
      };
      prepared.set(stats, p);
    }
    return p;
  };
  const { k1, b } = BM25;
  return (entry: PendingEntry) => {
    const { average, idf } = of(statsOf(entry));
    const { text, before, after } = entry.terms;
    const norm = (field: FieldTerms) => k1 * (1 - b + (b * field.length) / average);
    const nText = norm(text);
    const nBefore = before ? norm(before) : 0;
    const nAfter = after ? norm(after) : 0;
    let total = 0;
    for (let i = 0; i < terms.length; i++) {
      const term = terms[i];
      let tf = 0;
      const inText = text.counts.get(term);
      if (inText) tf += (inText * (k1 + 1)) / (inText + nText);
      const inBefore = before?.counts.get(term);
      if (inBefore) tf += (FIELD_WEIGHTS.before * (inBefore * (k1 + 1))) / (inBefore + nBefore);
      const inAfter = after?.counts.get(term);
      if (inAfter) tf += (FIELD_WEIGHTS.after * (inAfter * (k1 + 1))) / (inAfter + nAfter);
      if (tf) total += idf[i] * tf;
    }
    return total;
  };
}
