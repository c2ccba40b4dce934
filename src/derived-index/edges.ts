import { slugify } from "../documents/slug";
import type { IndexedDocument } from "../documents/index-view";

/** One derived link between blocks: `[[Title]]` (wiki_link) or `((block-id))` (block_ref). */
export interface BlockEdge {
  type: "wiki_link" | "block_ref";
  from: { documentId: string; blockId: string };
  /** The linked document (null when not in the workspace's index) and, for block_ref, the block. */
  to: { documentId: string | null; blockId: string | null };
  /** The link text as written: the title for wiki links, the block id for references. */
  target: string;
}

// [[Title]], [[Title|alias]], [[Title#heading]]: the title is what links.
const WIKI_LINK = /\[\[([^[\]|#\n]+)(?:#[^[\]|\n]*)?(?:\|[^[\]\n]*)?\]\]/g;
const BLOCK_REF = /\(\(([A-Za-z0-9][A-Za-z0-9_.:-]*)\)\)/g;

/**
 * Derives block edges from the indexed blocks of a workspace. Wiki links resolve to
 * the document whose title has the same slug; block references to the block's document.
 *
 * @example deriveEdges([{ documentId: "a", title: "A", blocks: [{ id: "b1", type: "text", content: "see [[B]]" }], … }])
 */
export function deriveEdges(docs: IndexedDocument[]): BlockEdge[] {
  const bySlug = new Map<string, string>();
  const byBlock = new Map<string, string>();
  for (const doc of docs) {
    if (!bySlug.has(slugify(doc.title))) bySlug.set(slugify(doc.title), doc.documentId);
    for (const block of doc.blocks) if (!byBlock.has(block.id)) byBlock.set(block.id, doc.documentId);
  }
  const edges: BlockEdge[] = [];
  for (const doc of docs) {
    for (const block of doc.blocks) {
      const from = { documentId: doc.documentId, blockId: block.id };
      for (const match of block.content.matchAll(WIKI_LINK)) {
        const target = match[1].trim();
        if (!target) continue;
        edges.push({
          type: "wiki_link",
          from,
          to: { documentId: bySlug.get(slugify(target)) ?? null, blockId: null },
          target,
        });
      }
      for (const match of block.content.matchAll(BLOCK_REF)) {
        const target = match[1];
        edges.push({
          type: "block_ref",
          from,
          to: { documentId: byBlock.get(target) ?? null, blockId: target },
          target,
        });
      }
    }
  }
  return edges;
}
