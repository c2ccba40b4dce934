import { describe, expect, test } from "bun:test";
import type { FieldTerms, ItemTerms } from "../src/search/analysis/item-terms";
import type { PartitionGroup } from "../src/search/lance/partitions";
import type { PendingView } from "../src/search/query/pending-index";
import { BUCKETED_FROM, TermPostings, termsOf, type PendingEntry } from "../src/search/query/pending-postings";
import { bestPendingByText } from "../src/search/query/pending-text";
import { bm25Scorer, type GroupStats } from "../src/search/query/scoring";

/**
 * The pending items' full-text list must be exactly the `count` best by BM25 (ties by key),
 * however it skips items: checked against scoring every item, on random owners' items with
 * a few very common terms (lists long enough to be bucketed), ties (same count and length),
 * context fields, deletes, and a filter.
 */

/** A small deterministic generator, so a failure repeats. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const VOCABULARY = Array.from({ length: 300 }, (_, i) => `t${i}`);

function field(next: () => number, length: number): FieldTerms {
  const counts = new Map<string, number>();
  for (let i = 0; i < length; i++) {
    // Skewed: the first terms are in most items, the tail in a few.
    const term = VOCABULARY[Math.floor(next() ** 3 * VOCABULARY.length)]!;
    counts.set(term, (counts.get(term) ?? 0) + 1);
  }
  return { length, counts };
}

function entry(next: () => number, n: number, group: PartitionGroup): PendingEntry {
  const context = group === "doc" && next() < 0.3;
  // Lengths from a short range, so many items tie on (count, length).
  const terms: ItemTerms = {
    text: field(next, 3 + Math.floor(next() * 12)),
    before: context ? field(next, 2 + Math.floor(next() * 8)) : null,
    after: context && next() < 0.5 ? field(next, 2 + Math.floor(next() * 8)) : null,
    vector: null,
    at: 0,
  };
  const kind = group === "mem" ? "memory" : "message";
  const id = `s${String(n).padStart(5, "0")}`;
  return { key: `${kind}|${id}|${id}`, kind, sourceId: id, itemId: id, terms };
}

function build(seed: number, perGroup: number, deletes: number) {
  const next = random(seed);
  const postings = new Map<PartitionGroup, Map<string, TermPostings>>();
  const live = new Map<PartitionGroup, PendingEntry[]>();
  let n = 0;
  for (const group of ["mem", "doc"] as const) {
    const lists = new Map<string, TermPostings>();
    const items: PendingEntry[] = [];
    for (let i = 0; i < perGroup; i++) {
      const item = entry(next, n++, group);
      items.push(item);
      for (const term of termsOf(item)) {
        if (!lists.has(term)) lists.set(term, new TermPostings(term));
        lists.get(term)!.add(item);
      }
    }
    // Deletes after the buckets exist: emptied buckets and lists must not be read.
    for (let i = 0; i < deletes; i++) {
      const [gone] = items.splice(Math.floor(next() * items.length), 1);
      for (const term of termsOf(gone!)) lists.get(term)!.delete(gone!);
    }
    postings.set(group, lists);
    live.set(group, items);
  }
  const stats = new Map<PartitionGroup, GroupStats>();
  for (const [group, items] of live) {
    const df = new Map<string, number>();
    let length = 0;
    for (const item of items) {
      length += item.terms.text.length;
      for (const term of termsOf(item)) df.set(term, (df.get(term) ?? 0) + 1);
    }
    // Statistics of a larger corpus (indexed items too), as a search has them.
    stats.set(group, { items: items.length * 3, length: length * 3, df: new Map([...df].map(([t, d]) => [t, d * 2])) });
  }
  const view = {
    postingsOf: (group: PartitionGroup, term: string) => postings.get(group)?.get(term),
  } as unknown as PendingView;
  return { view, live, stats, postings };
}

function bruteForce(
  live: Map<PartitionGroup, PendingEntry[]>,
  stats: Map<PartitionGroup, GroupStats>,
  terms: string[],
  accepts: (entry: PendingEntry) => boolean,
  count: number,
): string[] {
  const scored: Array<{ key: string; score: number }> = [];
  for (const [group, items] of live) {
    const scorer = bm25Scorer(terms, stats.get(group)!);
    for (const item of items) {
      const held = termsOf(item);
      if (!terms.some((t) => held.has(t)) || !accepts(item)) continue;
      scored.push({ key: item.key, score: scorer(item.terms) });
    }
  }
  scored.sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : 1));
  return scored.slice(0, count).map((s) => s.key);
}

describe("the pending items' full-text list", () => {
  test("is exactly the best `count` by BM25, ties by key, for common, rare and absent terms", () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const { view, live, stats, postings } = build(seed, 1_500, 300);
      // Some lists are long enough to be bucketed: the test covers the skipping path.
      expect([...postings.get("mem")!.values()].some((list) => list.size >= BUCKETED_FROM * 4)).toBe(true);
      const next = random(seed * 97);
      for (let q = 0; q < 60; q++) {
        const terms = [
          ...new Set(
            Array.from({ length: 1 + Math.floor(next() * 4) }, () => VOCABULARY[Math.floor(next() * 320)] ?? "absent"),
          ),
        ];
        const count = [1, 5, 20, 40][q % 4]!;
        const odd = q % 3 === 0;
        const accepts = (entry: PendingEntry) => !odd || Number(entry.sourceId.slice(1)) % 2 === 1;
        const got = bestPendingByText(view, terms, stats, accepts, count).map((e) => e.key);
        expect({ seed, q, terms, keys: got }).toEqual({
          seed,
          q,
          terms,
          keys: bruteForce(live, stats, terms, accepts, count),
        });
      }
    }
  });

  test("the ten best holders of a common term are found without reading its thousands", () => {
    const { view, stats, postings } = build(7, 3_000, 0);
    const lists = postings.get("mem")!;
    const common = [...lists.values()].sort((a, b) => b.size - a.size)[0]!;
    let read = 0;
    const accepts = () => {
      read++;
      return true;
    };
    bestPendingByText(view, [common.term], new Map([["mem", stats.get("mem")!]]), accepts, 10);
    // Ten best of a list of thousands: the shortest texts holding it most, a few buckets.
    expect(common.size).toBeGreaterThan(1_000);
    expect(read).toBeLessThan(common.size / 4);
  });
});
