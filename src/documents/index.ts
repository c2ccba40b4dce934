import { authPlugin } from "../auth/plugin";
import type { AuthService } from "../auth/service";
import { errorResponses } from "../shared/error-body";
import { createRouter } from "../lib/router";
import { WorkspaceParams } from "../shared/schemas";
import { oneOf } from "../shared/aliases";
import { parseClientKey } from "../crypto/client-key";
import { DECRYPT_ERRORS_HEADER, decryptPlugin, type EncryptionOptions } from "../crypto/plugin";
import { checkBodyWorkspace, fromUnifiedBody, requireWorkspaceId, type DocumentChanges } from "./changes";
import {
  CreateDocumentBody,
  CreatedSummaryEnvelope,
  DOCUMENT_BODY_LIMIT,
  Deleted,
  DeletedDocument,
  DocumentEnvelope,
  DocumentList,
  DocumentParams,
  DocumentWithContent,
  type FullDocument,
  GetDocumentQuery,
  ListDocumentsQuery,
  PatchDocumentBody,
  SummaryEnvelope,
  WorkspaceDocumentParams,
  WorkspaceRefQuery,
} from "./model";
import { documentFieldSeals, documentSeals, toCreatedSummary, toFullDocument, toSummary } from "./present";
import type { DocumentService } from "./service";
import { createDocumentRepository, type DocumentRepository } from "./repository";

const tags = ["documents"];

/**
 * A unified body's changes: a body key seals them (see `fromUnifiedBody`); without one,
 * reverse-proxy mode seals them with the caller's resolved key.
 */
async function changesOf(
  body: CreateDocumentBody | PatchDocumentBody,
  userId: string,
  writeKey: (userId: string, bodyKey: string | undefined) => Promise<Buffer | undefined>,
): Promise<DocumentChanges> {
  const changes = fromUnifiedBody(body);
  const carriesPayload =
    changes.documentPayload !== undefined || changes.blocksPayload !== undefined || changes.markdown !== undefined;
  if (carriesPayload) changes.encryptionKey ??= await writeKey(userId, undefined);
  return changes;
}

/** Routes of unified documents (docs/api.md#documents): every write keeps the derived index in step. */
export function documentRoutes(auth: AuthService, documents: DocumentService, encryption: EncryptionOptions) {
  return createRouter()
    .use(authPlugin(auth))
    .use(decryptPlugin(encryption))
    .post(
      "/v1/documents",
      async ({ principal, body, set, writeKey }) => {
        const workspaceId = requireWorkspaceId(body);
        const { document } = await documents.create(
          principal.userId,
          workspaceId,
          body.id,
          await changesOf(body, principal.userId, writeKey),
          "unified",
        );
        set.status = 201;
        return { document: toFullDocument(document) };
      },
      {
        auth: "memory:write",
        decrypt: documentSeals,
        body: CreateDocumentBody,
        bodyLimit: DOCUMENT_BODY_LIMIT,
        response: { 201: DocumentEnvelope, ...errorResponses() },
        detail: { tags, summary: "Create a document" },
      },
    )
    .patch(
      "/v1/documents/:id",
      async ({ principal, params, body, writeKey }) => {
        const document = await documents.update(
          principal.userId,
          requireWorkspaceId(body),
          params.id,
          await changesOf(body, principal.userId, writeKey),
          "unified",
        );
        return { document: toFullDocument(document) };
      },
      {
        auth: "memory:write",
        decrypt: documentSeals,
        params: DocumentParams,
        body: PatchDocumentBody,
        bodyLimit: DOCUMENT_BODY_LIMIT,
        response: { 200: DocumentEnvelope, ...errorResponses() },
        detail: { tags, summary: "Update a document (only the fields sent); workspace_id required" },
      },
    )
    .delete(
      "/v1/documents/:id",
      async ({ principal, params, query }) => {
        await documents.remove(principal.userId, requireWorkspaceId(query), params.id);
        return { id: params.id, deleted: true as const };
      },
      {
        auth: "memory:write",
        decrypt: true,
        params: DocumentParams,
        query: WorkspaceRefQuery,
        response: { 200: DeletedDocument, ...errorResponses() },
        detail: { tags, summary: "Delete a document and its index entries; ?workspace_id= required" },
      },
    )
    .get(
      "/v1/workspaces/:workspaceId/documents",
      async ({ principal, params, query }) => {
        const notebookId = oneOf<string>(query, ["notebookId", "notebook_id"]);
        const page = await documents.list(principal.userId, params.workspaceId, notebookId, query);
        return { documents: page.items.map(toSummary), nextCursor: page.nextCursor, hasMore: page.hasMore };
      },
      {
        auth: "memory:read",
        decrypt: true,
        params: WorkspaceParams,
        query: ListDocumentsQuery,
        response: { 200: DocumentList, ...errorResponses() },
        detail: {
          tags,
          summary:
            "List a workspace's documents (summaries, oldest first; ?limit= default 50, at most 200, and ?cursor=)",
        },
      },
    )
    .post(
      "/v1/workspaces/:workspaceId/documents",
      async ({ principal, params, body, set, writeKey }) => {
        checkBodyWorkspace(body);
        const { document } = await documents.create(
          principal.userId,
          params.workspaceId,
          body.id,
          await changesOf(body, principal.userId, writeKey),
          "unified",
        );
        set.status = 201;
        return { document: toCreatedSummary(document) };
      },
      {
        auth: "memory:write",
        decrypt: documentSeals,
        params: WorkspaceParams,
        body: CreateDocumentBody,
        bodyLimit: DOCUMENT_BODY_LIMIT,
        response: { 201: CreatedSummaryEnvelope, ...errorResponses() },
        detail: { tags, summary: "Create a document in this workspace (the path's workspace id wins)" },
      },
    )
    .get(
      "/v1/workspaces/:workspaceId/documents/:documentId",
      async ({ principal, params, query, set, openSealed }) => {
        const document = await documents.get(principal.userId, params.workspaceId, params.documentId);
        let full = toFullDocument(document);
        // ?clientKey= decrypts before the response is built (the shared transformer may still run after).
        if (query.clientKey !== undefined) {
          const { value, errors } = await openSealed(
            { document_payload: full.document_payload, blocks_payload: full.blocks_payload, markdown: full.markdown },
            parseClientKey(query.clientKey, "clientKey"),
            documentFieldSeals(principal.userId, document.id),
          );
          if (errors > 0) set.headers[DECRYPT_ERRORS_HEADER.toLowerCase()] = String(errors);
          full = { ...full, ...(value as Pick<FullDocument, "document_payload" | "blocks_payload" | "markdown">) };
        }
        return { document: full, blocks: full.blocks_payload, markdown: full.markdown };
      },
      {
        auth: "memory:read",
        decrypt: documentSeals,
        params: WorkspaceDocumentParams,
        query: GetDocumentQuery,
        response: { 200: DocumentWithContent, ...errorResponses() },
        detail: { tags, summary: "Get a document with its blocks and markdown" },
      },
    )
    .put(
      "/v1/workspaces/:workspaceId/documents/:documentId",
      async ({ principal, params, body, writeKey }) => {
        checkBodyWorkspace(body);
        const document = await documents.update(
          principal.userId,
          params.workspaceId,
          params.documentId,
          await changesOf(body, principal.userId, writeKey),
          "unified",
        );
        return { document: toSummary(document) };
      },
      {
        auth: "memory:write",
        decrypt: true,
        params: WorkspaceDocumentParams,
        body: PatchDocumentBody,
        bodyLimit: DOCUMENT_BODY_LIMIT,
        response: { 200: SummaryEnvelope, ...errorResponses() },
        detail: { tags, summary: "Update a document (same patch logic as PATCH /v1/documents/:id)" },
      },
    )
    .delete(
      "/v1/workspaces/:workspaceId/documents/:documentId",
      async ({ principal, params }) => {
        await documents.remove(principal.userId, params.workspaceId, params.documentId);
        return { deleted: true as const };
      },
      {
        auth: "memory:write",
        decrypt: true,
        params: WorkspaceDocumentParams,
        response: { 200: Deleted, ...errorResponses() },
        detail: { tags, summary: "Delete a document and its index entries" },
      },
    );
}

// What other domains use of documents: documents and their index view entries as a user's
// export carries them, what an import of a Markdown folder needs to make new ones, and how a
// workspace's documents and index view line up (the derived index's status).
export { DOCUMENT_TABLE } from "./repository";
export { type ViewCounts, workspaceBlockSources, workspaceViewCounts } from "./index-status-repository";
export { snapshotOf } from "./index-view";
export { INDEX_VIEW_TABLE } from "./index-view-repository";
export { slugify, uniqueSlug } from "./slug";

/** The ids and slugs a workspace's documents hold, so that an import adds new ones beside them. */
export const documentNames: Pick<DocumentRepository, "idsAndSlugs"> = createDocumentRepository();
