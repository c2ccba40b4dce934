import { markdownBlocks } from "./markdown-blocks";
import type { IndexedBlock, IndexSource } from "./repository";

/** One document as the derived index sees it: a snapshot taken by a unified write or a reindex. */
export interface IndexedDocument {
  ownerId: string;
  documentId: string;
  workspaceId: string;
  documentType: string;
  title: string;
  /** The id the title is indexed under (null in rows written before it was kept: the document id stands in). */
  rootBlockId: string | null;
  metadata: Record<string, unknown>;
  blocks: IndexedBlock[];
  createdAt: string;
  indexedAt: string;
}

/**
 * What a document gives the index: its indexable blocks, or, when it has none, blocks
 * split from its markdown (never from encrypted markdown). The title is indexed too, by
 * the search source, under `rootBlockId`.
 */
export function snapshotOf(doc: Omit<IndexSource, "seq">, indexedAt: string): IndexedDocument {
  const blocks = doc.indexableBlocks.length
    ? doc.indexableBlocks.map(({ id, type, content }) => ({ id, type, content }))
    : markdownBlocks(doc.markdown);
  return {
    ownerId: doc.ownerId,
    documentId: doc.id,
    workspaceId: doc.workspaceId,
    documentType: doc.documentType,
    title: doc.title,
    rootBlockId: doc.rootBlockId,
    metadata: doc.metadata,
    blocks,
    createdAt: doc.createdAt,
    indexedAt,
  };
}
