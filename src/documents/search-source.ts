import type { Executor } from "../db/store";
import { groupByOwner, sourceKey, type SearchItem, type SearchSource, type SourceRef } from "../search";
import type { IndexedDocument } from "./index-view";
import type { IndexViewRepository } from "./index-view-repository";

/** The id a document's title is indexed under: its root block (the block that is the document itself). */
export const titleItemId = (doc: Pick<IndexedDocument, "rootBlockId" | "documentId">) =>
  doc.rootBlockId ?? doc.documentId;

/**
 * Feeds documents to the search index from the index view (not from the stored
 * documents), sourceId = document id: the title as one item (itemId = the root block
 * id), then one item per non-blank block (itemId = block id), each with the document's
 * type and scalar metadata for filters. A block that has the root block's id replaces
 * the title item. Blocks carry no neighbouring context, so `context` changes nothing here.
 */
export function blockSearchSource(view: IndexViewRepository): SearchSource<undefined, "block"> {
  return {
    kind: "block",
    async load(tx: Executor, refs: SourceRef[]) {
      const out = new Map<string, SearchItem[]>();
      for (const [ownerId, ids] of groupByOwner(refs)) {
        for (const doc of (await view.getMany(tx, ownerId, ids)).values()) {
          const ref = { ownerId, kind: "block" as const, sourceId: doc.documentId };
          const item = (itemId: string, text: string): SearchItem => ({
            ...ref,
            itemId,
            workspaceId: doc.workspaceId,
            sessionId: null,
            documentType: doc.documentType,
            metadata: doc.metadata,
            createdAtMs: Date.parse(doc.createdAt),
            text,
          });
          const seen = new Set<string>();
          const items: SearchItem[] = [];
          for (const block of doc.blocks) {
            if (!block.content.trim() || seen.has(block.id)) continue;
            seen.add(block.id);
            items.push(item(block.id, block.content));
          }
          const titleId = titleItemId(doc);
          if (doc.title.trim() && !seen.has(titleId)) items.unshift(item(titleId, doc.title));
          out.set(sourceKey(ref), items);
        }
      }
      return out;
    },
    async *listAll(tx: Executor) {
      for await (const key of view.allKeys(tx))
        yield { ownerId: key.ownerId, kind: "block" as const, sourceId: key.documentId };
    },
  };
}
