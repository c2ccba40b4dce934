import type { Executor } from "../db/store";
import { groupByOwner, sourceKey, type SearchItem, type SearchSource, type SourceRef } from "../search/types";
import type { IndexViewRepository } from "./index-view";

/**
 * Feeds document blocks to the search index from the index view (not from the stored
 * documents): one item per non-blank indexable block, sourceId = document id,
 * itemId = block id, with the document's type and scalar metadata for filters.
 * Blocks carry no neighbouring context, so `context` changes nothing here.
 */
export function blockSearchSource(view: IndexViewRepository): SearchSource {
  return {
    kind: "block",
    async load(tx: Executor, refs: SourceRef[]) {
      const out = new Map<string, SearchItem[]>();
      for (const [ownerId, ids] of groupByOwner(refs)) {
        for (const doc of (await view.getMany(tx, ownerId, ids)).values()) {
          const ref = { ownerId, kind: "block" as const, sourceId: doc.documentId };
          const seen = new Set<string>();
          const items: SearchItem[] = [];
          for (const block of doc.blocks) {
            if (!block.content.trim() || seen.has(block.id)) continue;
            seen.add(block.id);
            items.push({
              ...ref, itemId: block.id, workspaceId: doc.workspaceId, sessionId: null, documentType: doc.documentType,
              metadata: doc.metadata, createdAtMs: Date.parse(doc.createdAt), text: block.content,
            });
          }
          out.set(sourceKey(ref), items);
        }
      }
      return out;
    },
    async *listAll(tx: Executor) {
      for await (const key of view.allKeys(tx)) yield { ownerId: key.ownerId, kind: "block" as const, sourceId: key.documentId };
    },
  };
}
