/** A block as stored in the sidecar and in the index view. */
export interface IndexedBlock {
  id: string;
  type: string;
  content: string;
  [extra: string]: unknown;
}

/** A stored document: one row whichever view (unified or legacy) wrote it. */
export interface DocumentRow {
  ownerId: string;
  workspaceId: string;
  id: string;
  documentType: string;
  title: string;
  slug: string;
  rootBlockId: string;
  notebookId: string | null;
  documentPayload: unknown;
  blocksPayload: unknown;
  markdown: string;
  metadata: Record<string, unknown>;
  indexableBlocks: IndexedBlock[];
  createdAt: string;
  updatedAt: string;
}
