import { bindingFor, type SealLocator, type SealMap } from "../crypto/binding";
import type { DocumentSummary, FullDocument } from "./model";
import type { DocumentHead, DocumentRow } from "./repository";

/** The full form (docs/api.md#documents): every field listed, payloads exactly as stored. */
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

/** The summary form (docs/api.md#documents); `_meta` is the document's metadata. */
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
export const toCreatedSummary = (row: DocumentRow) => ({
  ...toSummary(row),
  workspace_id: row.workspaceId,
  markdown: row.markdown,
});

/** The sealed fields of a document, by the names its responses give them. */
const SEALED_FIELDS: Record<string, "documentPayload" | "blocksPayload" | "markdown"> = {
  document_payload: "documentPayload",
  blocks_payload: "blocksPayload",
  markdown: "markdown",
};

/**
 * Where a document's sealed fields sit in `fields` (`{document_payload, blocks_payload,
 * markdown}` or the legacy `{document, blocks, markdown}`), bound to `documentId`.
 */
export function documentFieldSeals(
  ownerId: string,
  documentId: string,
  names: Record<string, string> = SEALED_FIELDS,
): SealLocator {
  const bind = bindingFor(ownerId, "document", documentId);
  return (path) => (path.length === 1 && typeof path[0] === "string" && names[path[0]] ? bind(names[path[0]]) : null);
}

/** The unified responses' seals: `{document: {id, document_payload, …}}`, and the GET's `blocks` and `markdown` beside it. */
export const documentSeals: SealMap = ({ response, userId }) => {
  const id = (response as { document?: { id?: unknown } }).document?.id;
  if (typeof id !== "string") return () => null;
  const inDocument = documentFieldSeals(userId, id);
  const beside = documentFieldSeals(userId, id, { blocks: "blocksPayload", markdown: "markdown" });
  return (path) => (path[0] === "document" ? inDocument(path.slice(1)) : beside(path));
};
