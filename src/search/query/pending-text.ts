import { partitionGroup, type PartitionGroup } from "../lance/partitions";
import type { PendingEntry, PendingView } from "./pending-index";
import { bm25Scorer, termBound, type GroupStats } from "./scoring";

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
  groupStats: Map<PartitionGroup, GroupStats>,
  accepts: (entry: PendingEntry) => boolean,
  count: number,
): PendingEntry[] {
  const scorers = new Map([...groupStats].map(([group, stats]) => [group, bm25Scorer(terms, stats)]));
  const score = (entry: PendingEntry) => scorers.get(partitionGroup(entry.kind))!(entry.terms);
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
