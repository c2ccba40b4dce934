import type { DocumentSummary, FullDocument } from "./model";
import type { DocumentHead, DocumentRow } from "./repository";

/** Spec §2 full form: every field listed, payloads exactly as stored. */
export function toFullDocument(row: DocumentRow): FullDocument {
  return {
    id: row.id,
    project_id: row.workspaceId,
    workspace_id: row.workspaceId,
    document_type: row.documentType,
    title: row.title,
    slug: row.slug,
    root_block_id: row.rootBlockId,
    notebook_id: row.notebookId,
    document_payload: row.documentPayload as FullDocument["document_payload"],
    blocks_payload: row.blocksPayload as FullDocument["blocks_payload"],
    markdown: row.markdown,
    metadata: row.metadata,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** Spec §2 summary form; `_meta` is the document's metadata. */
export function toSummary(row: DocumentHead): DocumentSummary {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    notebookId: row.notebookId,
    title: row.title,
    slug: row.slug,
    rootBlockId: row.rootBlockId,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    _meta: row.metadata,
  };
}

/** The workspace-scoped create: a summary that also carries the other description's fields. */
export const toCreatedSummary = (row: DocumentRow) => ({ ...toSummary(row), workspace_id: row.workspaceId, markdown: row.markdown });
