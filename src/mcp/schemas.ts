// TypeBox's own builder: Elysia's `t.Integer` also accepts numeric strings (for query parameters), a tool's integers do not.
import { Type as t, type TObject } from "@sinclair/typebox";
import { MessageCreated } from "../chats/model";
import { BuiltContext } from "../context/model";
import { FullDocument } from "../documents/model";
import { QueryItem } from "../documents-query/model";
import { ExtractMessage, ExtractResponse } from "../formation/model";
import { MemoryProposal, MemoryRecord } from "../memories/model";
import { Mode, Scalar, Strategy, Timestamp } from "../shared/schemas";
import { MAX_FILTER_KEYS } from "../shared/search-filters";

/*
 * Tool input and output schemas, in TypeBox like every other shape (src/mcp/typebox-zod.ts
 * hands them to the SDK). Outputs are the REST records they come from, less the fields a tool
 * leaves out; inputs are the tools' own (snake_case, with descriptions written for a model),
 * with the REST API's bounds. Each tool also checks the REST body it builds against the
 * route's own TypeBox schema, and the services check bytes.
 */

const WorkspaceId = t.String({
  minLength: 1,
  maxLength: 256,
  description: "a workspace id (ws_…); default: the session's --workspace",
});
const Query = t.String({ minLength: 1, maxLength: 10_000 });
const MinScore = t.Number({ minimum: 0, maximum: 1, description: "drop results scoring below this (0..1)" });
const SessionId = (description: string) => t.String({ minLength: 1, maxLength: 256, description });
const Page = {
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 1000, description: "page size; default 100" })),
  cursor: t.Optional(t.String({ minLength: 1, maxLength: 1024, description: "nextCursor of the previous page" })),
};
const Free = (description: string) => t.Object({}, { additionalProperties: true, description });

export const Filters = t.Object(
  {
    workspace_id: t.Optional(
      t.String({ minLength: 1, maxLength: 256, description: "only memories of this workspace" }),
    ),
    session_id: t.Optional(SessionId("only memories of this conversation")),
    // propertyNames: TypeBox's record drops a key schema's bounds; the converter keeps this one.
    metadata: t.Optional(
      t.Record(t.String(), Scalar, {
        propertyNames: { type: "string", minLength: 1 },
        description: "equality on metadata keys",
      }),
    ),
  },
  { description: `at most ${MAX_FILTER_KEYS} keys in all, counting those inside metadata` },
);

export const RememberInput = t.Object({
  content: t.String({
    minLength: 1,
    description: "the fact to remember, self-contained; at most 51,200 bytes of UTF-8",
  }),
  workspace_id: t.Optional(WorkspaceId),
  session_id: t.Optional(SessionId("the conversation this memory comes from")),
  metadata: t.Optional(Free('free-form JSON object (at most 16 KB), e.g. {"topic": "travel"}')),
  timestamp: t.Optional(
    t.Union(Timestamp.anyOf, {
      description:
        "when it happened, if not now: ISO 8601 (2023-05-07 or 2023-05-07T13:45:00Z, UTC without an offset) or Unix seconds",
    }),
  ),
});

export const RecallInput = t.Object({
  query: t.String({ ...Query, description: "what to look for, in natural language" }),
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 100, description: "default 10" })),
  filters: t.Optional(Filters),
  minScore: t.Optional(MinScore),
});

export const BuildContextInput = t.Object({
  query: t.String({ ...Query, description: "the user's request or topic" }),
  workspace_id: t.Optional(WorkspaceId),
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 50, description: "items to include; default 10" })),
  include: t.Optional(
    t.Object({
      memories: t.Optional(t.Boolean({ description: "default true" })),
      notes: t.Optional(t.Boolean({ description: "document blocks; default false" })),
      files: t.Optional(t.Boolean({ description: "default false" })),
    }),
  ),
  filters: t.Optional(Filters),
  minScore: t.Optional(MinScore),
});

export const ForgetInput = t.Object({
  id: t.String({ minLength: 1, maxLength: 256, description: "the memory id (mem_…)" }),
});

export const ListMemoriesInput = t.Object(Page);

export const SearchDocumentsInput = t.Object({
  query: t.String({ ...Query, description: "what to look for" }),
  workspace_id: t.Optional(
    t.String({ ...WorkspaceId, description: "only this workspace; default: the session's --workspace, else all" }),
  ),
  top_k: t.Optional(t.Integer({ minimum: 1, maximum: 100, description: "default 10" })),
  include: t.Optional(
    t.Object({
      notes: t.Optional(t.Boolean({ description: "document blocks and chat messages; default true" })),
      memories: t.Optional(t.Boolean({ description: "default false" })),
      files: t.Optional(t.Boolean({ description: "default false" })),
    }),
  ),
  document_type: t.Optional(
    t.String({ minLength: 1, maxLength: 64, description: "only documents of this type, e.g. 'note'" }),
  ),
  minScore: t.Optional(MinScore),
});

export const ReadDocumentInput = t.Object({
  document_id: t.String({ minLength: 1, maxLength: 256 }),
  workspace_id: t.Optional(WorkspaceId),
});

export const WriteDocumentInput = t.Object({
  workspace_id: t.Optional(WorkspaceId),
  document_id: t.Optional(
    t.String({
      minLength: 1,
      maxLength: 128,
      pattern: "^[A-Za-z0-9][A-Za-z0-9_.:-]*$",
      description: "omit to create a new document; an existing id patches it, a new one creates it with that id",
    }),
  ),
  title: t.Optional(t.String({ minLength: 1, maxLength: 500, description: "required when creating" })),
  markdown: t.Optional(
    t.String({ description: "the whole content as markdown (replaces the previous content); at most 5 MB" }),
  ),
  document_type: t.Optional(t.String({ minLength: 1, maxLength: 64, description: "default 'note'" })),
  metadata: t.Optional(Free("replaces the metadata (at most 64 KB)")),
  metadata_patch: t.Optional(Free("keys merged into the metadata; a null value removes the key")),
});

export const AppendChatMessageInput = t.Object({
  workspace_id: t.Optional(WorkspaceId),
  thread_id: t.Optional(t.String({ minLength: 1, maxLength: 256, description: "omit to start a new thread" })),
  thread_title: t.Optional(
    t.String({ minLength: 1, maxLength: 500, description: "title of a new thread; default 'New chat'" }),
  ),
  role: t.Union([t.Literal("user"), t.Literal("assistant")]),
  content: t.String({ minLength: 1, description: "the message, at most 200 KB of UTF-8" }),
  parent_id: t.Optional(
    t.String({
      minLength: 1,
      maxLength: 256,
      description: "the message this one answers; default the thread's latest",
    }),
  ),
});

export const ExtractMemoriesInput = t.Object({
  messages: t.Array(ExtractMessage, {
    minItems: 1,
    maxItems: 100,
    description: "the conversation to learn from, oldest first",
  }),
  workspace_id: t.Optional(WorkspaceId),
  session_id: t.Optional(SessionId("the conversation's id, recorded as the source")),
  dry_run: t.Optional(t.Boolean({ description: "true: answer the decisions without applying them" })),
});

export const ListProposalsInput = t.Object(Page);
export const ProposalIdInput = t.Object({
  id: t.String({ minLength: 1, maxLength: 256, description: "the proposal id (prop_…)" }),
});

// Outputs: the REST records.

/** A memory as a tool returns it: the REST record without the storage-only fields. */
export const MemoryOutput = t.Omit(MemoryRecord, ["ownerId", "projectId", "status"]);
/** Signals: the ones that ranked (text, words, time, vector); a hit's own scores stay REST's. */
export const RecallOutput = t.Object({
  results: t.Array(t.Composite([MemoryOutput, t.Object({ score: t.Number() })])),
  mode: Mode,
  strategy: Strategy,
  signals: BuiltContext.properties.signals,
});
export const BuildContextOutput = BuiltContext;
export const ForgetOutput = t.Object({ id: t.String(), deleted: t.Literal(true) });
export const ListMemoriesOutput = t.Object({
  memories: t.Array(MemoryOutput),
  nextCursor: t.Union([t.String(), t.Null()]),
  hasMore: t.Boolean(),
});
export const SearchDocumentsOutput = t.Object({
  query: t.String(),
  mode: Mode,
  strategy: Strategy,
  signals: BuiltContext.properties.signals,
  items: t.Array(QueryItem),
  contextText: t.String(),
});
/** A document as a tool returns it: its content as markdown, without the block payloads. */
export const DocumentOutput = t.Pick(FullDocument, [
  "id",
  "workspace_id",
  "title",
  "slug",
  "document_type",
  "notebook_id",
  "markdown",
  "metadata",
  "created_at",
  "updated_at",
]);
export const WriteDocumentOutput = t.Object({ created: t.Boolean(), document: DocumentOutput });
export const AppendChatMessageOutput = t.Composite([t.Object({ thread_id: t.String() }), MessageCreated]);
export const ExtractMemoriesOutput = ExtractResponse;

export const ProposalOutput = t.Composite([
  t.Omit(MemoryProposal, ["memory"]),
  t.Object({
    memory: t.Union([MemoryOutput, t.Null()], { description: "the memory as it is now; null once deleted" }),
  }),
]);
export const ListProposalsOutput = t.Object({
  proposals: t.Array(ProposalOutput),
  nextCursor: t.Union([t.String(), t.Null()]),
  hasMore: t.Boolean(),
});

/** The fields of an output record, in its order: what a tool copies from the service's answer. */
export const fieldsOf = <T extends TObject>(schema: T) =>
  Object.keys(schema.properties) as Array<keyof T["properties"] & string>;

/** `record` cut to the fields of `schema`, so a field added to the REST record reaches the tool without another list. */
export function pick<T extends TObject>(schema: T, record: Record<string, unknown>): T["static"] {
  return Object.fromEntries(fieldsOf(schema).map((key) => [key, record[key]])) as T["static"];
}
