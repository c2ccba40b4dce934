import { FIELD_WEIGHTS } from "../analysis/item-terms";
import type { PartitionGroup } from "../lance/partitions";
import type { PendingView } from "./pending-index";
import type { Bucket, PendingEntry, TermPostings } from "./pending-postings";
import { BM25, bm25Parts, bm25Scorer, type GroupStats } from "./scoring";

/** The most a term's count can add in an item with context fields: k1 + 1 in each field, weighted. */
const CONTEXT_SHARE = (BM25.k1 + 1) * (FIELD_WEIGHTS.text + FIELD_WEIGHTS.before + FIELD_WEIGHTS.after);
/** A bound is trusted to stop a list only when it is clearly below the score it must beat (float sums differ by order). */
const MARGIN = 1 + 1e-9;

interface Scored {
  entry: PendingEntry;
  score: number;
}

/**
 * The `count` pending items that score best by text (BM25 with the owner's statistics,
 * ties by key), what LanceDB's full-text list gives of the indexed ones. Exact, without
 * scoring every match: each query term's items come best first by the term's share of
 * their score (pending-postings.ts), and a term's list is left once the best share still
 * unread there, plus the most any other term could add, cannot beat the `count`-th best
 * score found (the threshold algorithm). So a common term held by thousands of pending
 * items costs about the items that could make the list, not all of them.
 */
export function bestPendingByText(
  pending: PendingView,
  terms: readonly string[],
  groupStats: Map<PartitionGroup, GroupStats>,
  accepts: (entry: PendingEntry) => boolean,
  count: number,
): PendingEntry[] {
  const found: Scored[] = [];
  for (const [group, stats] of groupStats)
    for (const scored of bestOfGroup((term) => pending.postingsOf(group, term), terms, stats, accepts, count))
      insert(found, scored, count);
  return found.map((scored) => scored.entry);
}

/** One term's list as a search reads it: its bound, and its buckets best first (null: read whole). */
interface TermList {
  postings: TermPostings;
  bound: number;
  buckets: Array<{ share: number; bucket: Bucket }> | null;
}

function bestOfGroup(
  postingsOf: (term: string) => TermPostings | undefined,
  terms: readonly string[],
  stats: GroupStats,
  accepts: (entry: PendingEntry) => boolean,
  count: number,
): Scored[] {
  const parts = bm25Parts(terms, stats);
  const scorer = bm25Scorer(terms, stats, parts);
  const { idf, saturate } = parts;
  const lists: TermList[] = [];
  for (const [i, term] of terms.entries()) {
    const postings = postingsOf(term);
    if (postings?.size) lists.push(termList(postings, idf[i], saturate));
  }
  // The rarest (highest share) first: its items fill the list soonest with strong scores.
  lists.sort((a, b) => b.bound - a.bound);
  // What an item not read yet can still get from each list: its bound until the list is
  // read, then the best share left unread there (0 once read whole).
  const unread = lists.map((list) => list.bound);
  const best: Scored[] = [];
  const seen = new Set<PendingEntry>();
  const visit = (entry: PendingEntry) => {
    if (seen.has(entry)) return;
    seen.add(entry);
    if (accepts(entry)) insert(best, { entry, score: scorer(entry.terms) }, count);
  };
  // Whether an item not read yet, with `share` from list `at`, could still make the list.
  const couldEnter = (at: number, share: number) => {
    if (best.length < count) return true;
    let bound = share;
    for (let j = 0; j < unread.length; j++) if (j !== at) bound += unread[j];
    return bound * MARGIN >= best[best.length - 1].score;
  };
  for (const [at, list] of lists.entries()) {
    if (!couldEnter(at, list.bound)) continue;
    for (const entry of list.postings.mixed) visit(entry);
    if (!list.buckets) {
      for (const entry of list.postings.entries) visit(entry);
      unread[at] = 0;
      continue;
    }
    let left = 0;
    for (const { share, bucket } of list.buckets) {
      if (!couldEnter(at, share)) {
        left = share;
        break;
      }
      for (const entry of bucket.entries) visit(entry);
    }
    unread[at] = left;
  }
  return best;
}

/** A term's list with its buckets ordered by share (items of text alone) and its bound. */
function termList(postings: TermPostings, idf: number, saturate: (tf: number, length: number) => number): TermList {
  const mixed = postings.mixed.size ? idf * CONTEXT_SHARE : 0;
  const textBuckets = postings.textBuckets();
  if (!textBuckets) {
    // A short list, read whole: its bound is its best item's share.
    let bound = mixed;
    for (const entry of postings.entries)
      if (!postings.mixed.has(entry))
        bound = Math.max(
          bound,
          idf * saturate(entry.terms.text.counts.get(postings.term) ?? 0, entry.terms.text.length),
        );
    return { postings, bound, buckets: null };
  }
  const buckets = [...textBuckets]
    .map((bucket) => ({ share: idf * saturate(bucket.count, bucket.length), bucket }))
    .sort((a, b) => b.share - a.share);
  return { postings, bound: Math.max(mixed, buckets[0]?.share ?? 0), buckets };
}

/** Adds `scored` to `best` (sorted, best first; ties by key) if it belongs among the `count` best. */
function insert(best: Scored[], scored: Scored, count: number): void {
  if (best.length >= count && !worse(best[best.length - 1], scored)) return;
  // Kept sorted, best first: `count` is small (at most 200).
  let at = best.length;
  while (at > 0 && worse(best[at - 1], scored)) at--;
  best.splice(at, 0, scored);
  if (best.length > count) best.pop();
}

const worse = (a: Scored, b: Scored) => a.score < b.score || (a.score === b.score && a.entry.key > b.entry.key);
