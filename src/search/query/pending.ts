import type { Executor } from "../../db/store";
import { itemTerms, type ItemTerms } from "../analysis/item-terms";
import type { WordVectors } from "../analysis/word-vectors";
import { partitionGroup, type PartitionGroup } from "../lance/partitions";
import type { AnyItem, SearchKind, SearchSources, SourceRef } from "../types";

/** An item of a pending source as the store of record holds it now, analysed as the index writer would. */
export interface PendingItem {
  item: AnyItem;
  group: PartitionGroup;
  terms: ItemTerms;
}

/**
 * The current items of the owner's pending sources (changes the index does not reflect
 * yet), read from the store of record through their sources: a deleted source has none.
 */
export async function loadPending(db: Executor, sources: SearchSources, refs: SourceRef[], vectors: WordVectors | null): Promise<PendingItem[]> {
  const byKind = new Map<SearchKind, SourceRef[]>();
  for (const ref of refs) (byKind.get(ref.kind) ?? byKind.set(ref.kind, []).get(ref.kind)!).push(ref);
  const out: PendingItem[] = [];
  for (const [kind, kindRefs] of byKind) {
    const source = sources[kind];
    if (!source) continue;
    for (const items of (await source.load(db, kindRefs, { context: true })).values()) {
      for (const item of items) out.push({ item, group: partitionGroup(item.kind), terms: itemTerms(item, vectors) });
    }
  }
  return out;
}
