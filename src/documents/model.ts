import { t } from "elysia";
import { MB, type BodyLimit } from "../lib/body-limits";
import { FreeObject, WorkspaceId } from "../shared/schemas";
import { PageQueryFields } from "../shared/pagination";

/** Body limits (docs/api.md#requests-and-limits): larger bodies answer 413 naming the field. */
export const LIMITS = {
  documentPayloadBytes: 5 * 1024 * 1024,
  markdownBytes: 5 * 1024 * 1024,
  blocks: 10_000,
  metadataBytes: 64 * 1024,
} as const;

/**
 * A document or note write's body: a 5 MB payload plus 5 MB of markdown, each at up to
 * twice its size once escaped, with the blocks beside them.
 */
export const DOCUMENT_BODY_LIMIT: BodyLimit = { bytes: 20 * MB, nodes: 1_000_000 };

const Id = t.String({
  minLength: 1,
  maxLength: 128,
  pattern: "^[A-Za-z0-9][A-Za-z0-9_.:-]*$",
  description: "letters, digits, _ . : -",
});
const Title = t.String({ minLength: 1, maxLength: 500 });
const DocumentType = t.String({ minLength: 1, maxLength: 64, description: "default 'note'" });
const BlockId = t.String({ minLength: 1, maxLength: 256 });
const ClientKey = t.String({
  description:
    "a 32-byte client key (64 hex or base64/base64url): payloads, blocks and markdown are stored encrypted with it; never stored",
});

export const DocumentPayload = t.Union([FreeObject, t.String()], {
  description: "an object, an encrypted envelope {format, ciphertext}, or an 'iv:tag:ct' string; at most 5 MB",
});
export const BlocksPayload = t.Union([t.Array(t.Unknown()), FreeObject, t.String()], {
  description: "an array of blocks (at most 10,000), an encrypted envelope, or an 'iv:tag:ct' string",
});
export const IndexableBlock = t.Object(
  {
    id: BlockId,
    type: t.Optional(t.String({ maxLength: 64, description: "default 'text'" })),
    content: t.String({ description: "plaintext fed to the search index" }),
  },
  { additionalProperties: true, description: "a block the search index sees; at most 10,000 per document" },
);
export type IndexableBlockInput = typeof IndexableBlock.static;
const IndexableBlocks = t.Array(IndexableBlock);

/** Fields shared by create and patch, each in its snake_case and camelCase spelling. */
const ContentFields = {
  root_block_id: t.Optional(BlockId),
  rootBlockId: t.Optional(BlockId),
  document_type: t.Optional(DocumentType),
  documentType: t.Optional(DocumentType),
  document_payload: t.Optional(DocumentPayload),
  documentPayload: t.Optional(DocumentPayload),
  blocks_payload: t.Optional(BlocksPayload),
  blocksPayload: t.Optional(BlocksPayload),
  markdown: t.Optional(t.String({ description: "at most 5 MB; an 'iv:tag:ct' string when encrypted" })),
  metadata: t.Optional(FreeObject),
  _meta: t.Optional(FreeObject),
  indexable_blocks: t.Optional(IndexableBlocks),
  indexableBlocks: t.Optional(IndexableBlocks),
  client_key: t.Optional(ClientKey),
  clientKey: t.Optional(ClientKey),
};

export const CreateDocumentBody = t.Object({
  workspace_id: t.Optional(WorkspaceId),
  workspaceId: t.Optional(WorkspaceId),
  title: Title,
  id: t.Optional(Id),
  notebook_id: t.Optional(t.String({ minLength: 1, maxLength: 256 })),
  notebookId: t.Optional(t.String({ minLength: 1, maxLength: 256 })),
  ...ContentFields,
});
export type CreateDocumentBody = typeof CreateDocumentBody.static;

const NotebookRef = t.Union([t.String({ minLength: 1, maxLength: 256 }), t.Null()], { description: "null detaches" });
export const PatchDocumentBody = t.Object({
  workspace_id: t.Optional(WorkspaceId),
  workspaceId: t.Optional(WorkspaceId),
  title: t.Optional(Title),
  notebook_id: t.Optional(NotebookRef),
  notebookId: t.Optional(NotebookRef),
  metadata_patch: t.Optional(
    t.Record(t.String(), t.Unknown(), { description: "keys merged into metadata; a null value removes the key" }),
  ),
  ...ContentFields,
});
export type PatchDocumentBody = typeof PatchDocumentBody.static;

/** The unified document record, full form, plus `notebook_id` (docs/api.md#documents). */
export const FullDocument = t.Object({
  id: t.String(),
  project_id: t.String({ description: "the workspace id" }),
  workspace_id: t.String(),
  document_type: t.String(),
  title: t.String(),
  slug: t.String(),
  root_block_id: t.String(),
  notebook_id: t.Union([t.String(), t.Null()]),
  document_payload: DocumentPayload,
  blocks_payload: BlocksPayload,
  markdown: t.String(),
  metadata: FreeObject,
  created_at: t.String({ format: "date-time" }),
  updated_at: t.String({ format: "date-time" }),
});
export type FullDocument = typeof FullDocument.static;

const SummaryFields = {
  id: t.String(),
  workspaceId: t.String(),
  notebookId: t.Union([t.String(), t.Null()]),
  title: t.String(),
  slug: t.String(),
  rootBlockId: t.String(),
  createdAt: t.String({ format: "date-time" }),
  updatedAt: t.String({ format: "date-time" }),
  _meta: FreeObject,
};
/** The document summary (docs/api.md#documents). */
export const DocumentSummary = t.Object(SummaryFields);
export type DocumentSummary = typeof DocumentSummary.static;
/** The workspace-scoped create answers a summary that also satisfies the other documented shape (docs/api.md#documents). */
export const CreatedSummary = t.Object({ ...SummaryFields, workspace_id: t.String(), markdown: t.String() });

export const DocumentEnvelope = t.Object({ document: FullDocument });
export const CreatedSummaryEnvelope = t.Object({ document: CreatedSummary });
export const SummaryEnvelope = t.Object({ document: DocumentSummary });
export const DocumentList = t.Object({
  documents: t.Array(DocumentSummary),
  nextCursor: t.Union([t.String(), t.Null()], { description: "pass as ?cursor= for the next page; null on the last" }),
  hasMore: t.Boolean(),
});
export const DocumentWithContent = t.Object({ document: FullDocument, blocks: BlocksPayload, markdown: t.String() });

export const DocumentParams = t.Object({ id: t.String({ minLength: 1, maxLength: 256 }) });
export const WorkspaceDocumentParams = t.Object({
  workspaceId: WorkspaceId,
  documentId: t.String({ minLength: 1, maxLength: 256 }),
});
export const WorkspaceRefQuery = t.Object({
  workspace_id: t.Optional(WorkspaceId),
  workspaceId: t.Optional(WorkspaceId),
});
export const ListDocumentsQuery = t.Object({
  notebookId: t.Optional(t.String({ minLength: 1, maxLength: 256 })),
  notebook_id: t.Optional(t.String({ minLength: 1, maxLength: 256 })),
  ...PageQueryFields,
});
export const GetDocumentQuery = t.Object({
  clientKey: t.Optional(
    t.String({ description: "decrypts payload, blocks and markdown before the response is built" }),
  ),
});
export const DeletedDocument = t.Object({ id: t.String(), deleted: t.Literal(true) });
export const Deleted = t.Object({ deleted: t.Literal(true) });
