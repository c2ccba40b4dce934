import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { Mode, RankedBy, Scalar, SearchSignals, Strategy, WorkspaceId } from "../shared/schemas";
import { SearchFilters } from "../shared/search-filters";

const DocumentType = t.String({ minLength: 1, maxLength: 64 });
// TypeBox's own Integer: Elysia's `t.Integer` also accepts numeric strings and names no bound when it fails.
const TopK = Type.Integer({ minimum: 1, maximum: 100, description: "default 10, at most 100" });

export const DocumentsQueryBody = t.Object({
  query: t.String({ minLength: 1, maxLength: 10_000 }),
  workspace_id: t.Optional(WorkspaceId),
  workspaceId: t.Optional(WorkspaceId),
  top_k: t.Optional(TopK),
  topK: t.Optional(TopK),
  signals: t.Optional(SearchSignals),
  include: t.Optional(
    t.Object({
      notes: t.Optional(t.Boolean({ description: "document blocks and chat messages; default true" })),
      memories: t.Optional(t.Boolean({ description: "default false" })),
      files: t.Optional(t.Boolean({ description: "default false" })),
    }),
  ),
  filter: t.Optional(
    t.Object(
      {
        eq: t.Optional(
          t.Object(
            { document_type: t.Optional(DocumentType), documentType: t.Optional(DocumentType) },
            { additionalProperties: Scalar, description: "document_type, and equality on other (metadata) keys" },
          ),
        ),
      },
      {
        description: "eq is the only operator (any other key is a 400); at most 32 keys together with metadata.filters",
      },
    ),
  ),
  metadata: t.Optional(t.Object({ filters: t.Optional(SearchFilters) }, { additionalProperties: true })),
  minScore: t.Optional(t.Number({ minimum: 0, maximum: 1 })),
});
export type DocumentsQueryBody = typeof DocumentsQueryBody.static;

export const ItemType = t.Union([t.Literal("block"), t.Literal("message"), t.Literal("memory"), t.Literal("file")]);
export const QueryItem = t.Object({
  type: ItemType,
  id: t.String({ description: "block id, message id, memory id or file chunk id" }),
  sourceId: t.String({ description: "the record it comes from: document, thread, memory or file id" }),
  documentId: t.Union([t.String(), t.Null()], { description: "for blocks: the document" }),
  threadId: t.Union([t.String(), t.Null()], { description: "for messages: the chat thread" }),
  workspaceId: t.Union([t.String(), t.Null()]),
  title: t.Union([t.String(), t.Null()], { description: "the document's or thread's title" }),
  score: t.Number({ minimum: 0, maximum: 1 }),
  snippet: t.String({ description: "at most ~240 characters around the first query term" }),
  content: t.String(),
});
export type QueryItem = typeof QueryItem.static;

export const DocumentsQueryResponse = t.Object({
  query: t.String(),
  mode: Mode,
  strategy: Strategy,
  signals: RankedBy,
  query_strategy: t.Literal("semantic_first_keyword_fallback"),
  items: t.Array(QueryItem),
  results: t.Array(QueryItem, { description: "same as items" }),
  contextText: t.String(),
});
export type DocumentsQueryResponse = typeof DocumentsQueryResponse.static;
