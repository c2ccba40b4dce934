import { authPlugin } from "../auth/plugin";
import type { AuthService } from "../auth/service";
import { errorResponses } from "../errors/model";
import { createRouter } from "../lib/router";
import { WorkspaceParams } from "../workspaces/model";
import { oneOf } from "../lib/aliases";
import { checkBodyWorkspace, fromUnifiedBody, requireWorkspaceId } from "./changes";
import {
  CreateDocumentBody, CreatedSummaryEnvelope, Deleted, DeletedDocument, DocumentEnvelope, DocumentList, DocumentParams, DocumentWithContent,
  GetDocumentQuery, ListDocumentsQuery, PatchDocumentBody, SummaryEnvelope, WorkspaceDocumentParams, WorkspaceRefQuery,
} from "./model";
import { toCreatedSummary, toFullDocument, toSummary } from "./present";
import type { DocumentService } from "./service";

const tags = ["documents"];

/** Routes of spec §4 "Unified documents": every write keeps the derived index in step. */
export function documentRoutes(auth: AuthService, documents: DocumentService) {
  return createRouter()
    .use(authPlugin(auth))
    .post(
      "/v1/documents",
      async ({ principal, body, set }) => {
        const workspaceId = requireWorkspaceId(body);
        const { document } = await documents.create(principal.userId, workspaceId, body.id, fromUnifiedBody(body), "unified");
        set.status = 201;
        return { document: toFullDocument(document) };
      },
      { auth: "memory:write", body: CreateDocumentBody, response: { 201: DocumentEnvelope, ...errorResponses() }, detail: { tags, summary: "Create a document" } },
    )
    .patch(
      "/v1/documents/:id",
      async ({ principal, params, body }) => {
        const document = await documents.update(principal.userId, requireWorkspaceId(body), params.id, fromUnifiedBody(body), "unified");
        return { document: toFullDocument(document) };
      },
      {
        auth: "memory:write", params: DocumentParams, body: PatchDocumentBody, response: { 200: DocumentEnvelope, ...errorResponses() },
        detail: { tags, summary: "Update a document (only the fields sent); workspace_id required" },
      },
    )
    .delete(
      "/v1/documents/:id",
      async ({ principal, params, query }) => {
        await documents.remove(principal.userId, requireWorkspaceId(query), params.id, "unified");
        return { id: params.id, deleted: true as const };
      },
      {
        auth: "memory:write", params: DocumentParams, query: WorkspaceRefQuery, response: { 200: DeletedDocument, ...errorResponses() },
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
        auth: "memory:read", params: WorkspaceParams, query: ListDocumentsQuery, response: { 200: DocumentList, ...errorResponses() },
        detail: { tags, summary: "List a workspace's documents (summaries, oldest first; ?limit= default 50, at most 200, and ?cursor=)" },
      },
    )
    .post(
      "/v1/workspaces/:workspaceId/documents",
      async ({ principal, params, body, set }) => {
        checkBodyWorkspace(body);
        const { document } = await documents.create(principal.userId, params.workspaceId, body.id, fromUnifiedBody(body), "unified");
        set.status = 201;
        return { document: toCreatedSummary(document) };
      },
      {
        auth: "memory:write", params: WorkspaceParams, body: CreateDocumentBody, response: { 201: CreatedSummaryEnvelope, ...errorResponses() },
        detail: { tags, summary: "Create a document in this workspace (the path's workspace id wins)" },
      },
    )
    .get(
      "/v1/workspaces/:workspaceId/documents/:documentId",
      async ({ principal, params }) => {
        const document = await documents.get(principal.userId, params.workspaceId, params.documentId);
        const full = toFullDocument(document);
        return { document: full, blocks: full.blocks_payload, markdown: full.markdown };
      },
      {
        auth: "memory:read", params: WorkspaceDocumentParams, query: GetDocumentQuery, response: { 200: DocumentWithContent, ...errorResponses() },
        detail: { tags, summary: "Get a document with its blocks and markdown" },
      },
    )
    .put(
      "/v1/workspaces/:workspaceId/documents/:documentId",
      async ({ principal, params, body }) => {
        checkBodyWorkspace(body);
        const document = await documents.update(principal.userId, params.workspaceId, params.documentId, fromUnifiedBody(body), "unified");
        return { document: toSummary(document) };
      },
      {
        auth: "memory:write", params: WorkspaceDocumentParams, body: PatchDocumentBody, response: { 200: SummaryEnvelope, ...errorResponses() },
        detail: { tags, summary: "Update a document (same patch logic as PATCH /v1/documents/:id)" },
      },
    )
    .delete(
      "/v1/workspaces/:workspaceId/documents/:documentId",
      async ({ principal, params }) => {
        await documents.remove(principal.userId, params.workspaceId, params.documentId, "unified");
        return { deleted: true as const };
      },
      {
        auth: "memory:write", params: WorkspaceDocumentParams, response: { 200: Deleted, ...errorResponses() },
        detail: { tags, summary: "Delete a document and its index entries" },
      },
    );
}
