import type { Executor } from "../../db/store";
import { itemTerms, type ItemTerms } from "../analysis/item-terms";
import type { WordVectors } from "../analysis/word-vectors";
import { partitionGroup, type PartitionGroup } from "../lance/partitions";
import { loadSourceItems, type AnyItem, type SearchSources, type SourceRef } from "../types";

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
export async function loadPending(
  db: Executor,
  sources: SearchSources,
  refs: SourceRef[],
  vectors: WordVectors | null,
): Promise<PendingItem[]> {
  const items = await loadSourceItems(db, sources, refs, { context: true });
  return items.map((item) => ({ item, group: partitionGroup(item.kind), terms: itemTerms(item, vectors) }));
}
