import type { ItemTerms } from "../analysis/item-terms";
import type { SearchKind } from "../types";

/** An item of a source the index does not reflect yet, with its forward row as the write stored it. */
export interface PendingEntry {
  key: string;
  kind: SearchKind;
  sourceId: string;
  itemId: string;
  terms: ItemTerms;
}

/** The terms an item holds in its text or context, each once (what its postings are filed under). */
export function termsOf(entry: PendingEntry): Set<string> {
  const terms = new Set(entry.terms.text.counts.keys());
  for (const field of [entry.terms.before, entry.terms.after])
    if (field) for (const term of field.counts.keys()) terms.add(term);
  return terms;
}

/** A list this long or longer is kept in buckets as well: a shorter one is read whole. */
export const BUCKETED_FROM = 32;
/** Bucket key of a text of `length` terms holding the term `count` times (lengths stay far below it). */
const LENGTH_SPAN = 2 ** 24;

/** One bucket: items of text alone holding the term `count` times in a text of `length` terms. */
export interface Bucket {
  count: number;
  length: number;
  entries: Set<PendingEntry>;
}

/**
 * The pending items holding one term, laid out so that a search can take them best first
 * by the term's share of their BM25 (pending-text.ts). Within one count of the term, the
 * shorter an item's text, the larger its share, whatever the statistics; so items of text
 * alone are bucketed by (count, length), and a search orders the few buckets, not the
 * items. Items with context fields mix three fields' counts: they are kept apart and
 * always read. Only lists of `BUCKETED_FROM` items or more keep buckets (a common term's):
 * most terms are held by a few items, read whole.
 */
export class TermPostings {
  readonly entries = new Set<PendingEntry>();
  /** Items with context fields. */
  readonly mixed = new Set<PendingEntry>();
  private buckets: Map<number, Bucket> | null = null;

  constructor(readonly term: string) {}

  get size(): number {
    return this.entries.size;
  }

  add(entry: PendingEntry): void {
    this.entries.add(entry);
    if (hasContext(entry)) this.mixed.add(entry);
    else if (this.buckets) this.bucketOf(entry, true)!.entries.add(entry);
    else if (this.entries.size >= BUCKETED_FROM) {
      this.buckets = new Map();
      for (const held of this.entries) if (!hasContext(held)) this.bucketOf(held, true)!.entries.add(held);
    }
  }

  delete(entry: PendingEntry): void {
    this.entries.delete(entry);
    if (this.mixed.delete(entry) || !this.buckets) return;
    const bucket = this.bucketOf(entry, false);
    bucket?.entries.delete(entry);
    if (bucket?.entries.size === 0) this.buckets.delete(key(bucket.count, bucket.length));
  }

  /** The buckets of items of text alone, or null when the list is short enough to be read whole. */
  textBuckets(): Iterable<Bucket> | null {
    return this.buckets?.values() ?? null;
  }

  private bucketOf(entry: PendingEntry, create: boolean): Bucket | undefined {
    const count = entry.terms.text.counts.get(this.term) ?? 0;
    const length = entry.terms.text.length;
    const at = key(count, length);
    let bucket = this.buckets!.get(at);
    if (!bucket && create) {
      bucket = { count, length, entries: new Set() };
      this.buckets!.set(at, bucket);
    }
    return bucket;
  }
}

const key = (count: number, length: number) => count * LENGTH_SPAN + length;
const hasContext = (entry: PendingEntry) => Boolean(entry.terms.before || entry.terms.after);
