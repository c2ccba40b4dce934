import * as z from "zod";
import { MAX_FILTER_KEYS } from "../shared/search-filters";

/*
 * Tool input and output schemas (zod: the SDK lists them as JSON Schema and checks
 * arguments against them). The bounds are the REST API's; each tool also checks the REST
 * body it builds against the route's own TypeBox schema, and the services check bytes.
 */

const WorkspaceId = z.string().min(1).max(256).describe("a workspace id (ws_…); default: the session's --workspace");
const Scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const Query = z.string().min(1).max(10_000);
const MinScore = z.number().min(0).max(1).describe("drop results scoring below this (0..1)");
const FreeObject = z.record(z.string(), z.unknown());

export const Filters = z
  .object({
    workspace_id: z.string().min(1).max(256).optional().describe("only memories of this workspace"),
    session_id: z.string().min(1).max(256).optional().describe("only memories of this conversation"),
    metadata: z.record(z.string().min(1), Scalar).optional().describe("equality on metadata keys"),
  })
  .describe(`at most ${MAX_FILTER_KEYS} keys in all, counting those inside metadata`);

export const RememberInput = {
  content: z.string().min(1).describe("the fact to remember, self-contained; at most 51,200 bytes of UTF-8"),
  workspace_id: WorkspaceId.optional(),
  session_id: z.string().min(1).max(256).optional().describe("the conversation this memory comes from"),
  metadata: FreeObject.optional().describe("free-form JSON object (at most 16 KB), e.g. {\"topic\": \"travel\"}"),
  timestamp: z
    .union([z.string().min(1).max(64), z.number()])
    .optional()
    .describe("when it happened, if not now: ISO 8601 (2023-05-07 or 2023-05-07T13:45:00Z, UTC without an offset) or Unix seconds"),
};

export const RecallInput = {
  query: Query.describe("what to look for, in natural language"),
  limit: z.int().min(1).max(100).optional().describe("default 10"),
  filters: Filters.optional(),
  minScore: MinScore.optional(),
};

export const BuildContextInput = {
  query: Query.describe("the user's request or topic"),
  workspace_id: WorkspaceId.optional(),
  limit: z.int().min(1).max(50).optional().describe("items to include; default 10"),
  include: z
    .object({
      memories: z.boolean().optional().describe("default true"),
      notes: z.boolean().optional().describe("document blocks; default false"),
      files: z.boolean().optional().describe("default false"),
    })
    .optional(),
  filters: Filters.optional(),
  minScore: MinScore.optional(),
};

export const ForgetInput = { id: z.string().min(1).max(256).describe("the memory id (mem_…)") };

export const ListMemoriesInput = {
  limit: z.int().min(1).max(1000).optional().describe("page size; default 100"),
  cursor: z.string().min(1).max(1024).optional().describe("nextCursor of the previous page"),
};

export const SearchDocumentsInput = {
  query: Query.describe("what to look for"),
  workspace_id: WorkspaceId.optional().describe("only this workspace; default: the session's --workspace, else all"),
  top_k: z.int().min(1).max(100).optional().describe("default 10"),
  include: z
    .object({
      notes: z.boolean().optional().describe("document blocks and chat messages; default true"),
      memories: z.boolean().optional().describe("default false"),
      files: z.boolean().optional().describe("default false"),
    })
    .optional(),
  document_type: z.string().min(1).max(64).optional().describe("only documents of this type, e.g. 'note'"),
  minScore: MinScore.optional(),
};

export const ReadDocumentInput = {
  document_id: z.string().min(1).max(256),
  workspace_id: WorkspaceId.optional(),
};

export const WriteDocumentInput = {
  workspace_id: WorkspaceId.optional(),
  document_id: z
    .string().min(1).max(128).regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/)
    .optional()
    .describe("omit to create a new document; an existing id patches it, a new one creates it with that id"),
  title: z.string().min(1).max(500).optional().describe("required when creating"),
  markdown: z.string().optional().describe("the whole content as markdown (replaces the previous content); at most 5 MB"),
  document_type: z.string().min(1).max(64).optional().describe("default 'note'"),
  metadata: FreeObject.optional().describe("replaces the metadata (at most 64 KB)"),
  metadata_patch: FreeObject.optional().describe("keys merged into the metadata; a null value removes the key"),
};

export const AppendChatMessageInput = {
  workspace_id: WorkspaceId.optional(),
  thread_id: z.string().min(1).max(256).optional().describe("omit to start a new thread"),
  thread_title: z.string().min(1).max(500).optional().describe("title of a new thread; default 'New chat'"),
  role: z.enum(["user", "assistant"]),
  content: z.string().min(1).describe("the message, at most 200 KB of UTF-8"),
  parent_id: z.string().min(1).max(256).optional().describe("the message this one answers; default the thread's latest"),
};

// Outputs.
const Memory = z.object({
  id: z.string(),
  content: z.string(),
  metadata: FreeObject,
  workspaceId: z.string().nullable(),
  session_id: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const Mode = z.enum(["semantic", "fulltext_fallback"]);
const Strategy = z.enum(["hybrid", "vector", "fulltext"]);
/** The signals that ranked (text, words, time, vector). */
const Signals = z.array(z.enum(["text", "words", "time", "vector"]));

export const MemoryOutput = Memory;
export const RecallOutput = z.object({ results: z.array(Memory.extend({ score: z.number() })), mode: Mode, strategy: Strategy, signals: Signals });
export const BuildContextOutput = z.object({
  query: z.string(),
  mode: Mode,
  strategy: Strategy,
  signals: Signals,
  items: z.array(z.object({ type: z.string(), id: z.string(), score: z.number(), content: z.string() }).loose()),
  contextText: z.string(),
});
export const ForgetOutput = z.object({ id: z.string(), deleted: z.literal(true) });
export const ListMemoriesOutput = z.object({ memories: z.array(Memory), nextCursor: z.string().nullable(), hasMore: z.boolean() });
export const SearchDocumentsOutput = z.object({
  query: z.string(),
  mode: Mode,
  strategy: Strategy,
  signals: Signals,
  items: z.array(
    z.object({
      type: z.enum(["block", "message", "memory", "file"]),
      id: z.string(),
      sourceId: z.string(),
      documentId: z.string().nullable(),
      threadId: z.string().nullable(),
      workspaceId: z.string().nullable(),
      title: z.string().nullable(),
      score: z.number(),
      snippet: z.string(),
      content: z.string(),
    }),
  ),
  contextText: z.string(),
});
export const DocumentOutput = z.object({
  id: z.string(),
  workspace_id: z.string(),
  title: z.string(),
  slug: z.string(),
  document_type: z.string(),
  notebook_id: z.string().nullable(),
  markdown: z.string(),
  metadata: FreeObject,
  created_at: z.string(),
  updated_at: z.string(),
});
export const WriteDocumentOutput = z.object({ created: z.boolean(), document: DocumentOutput });
export const AppendChatMessageOutput = z.object({
  thread_id: z.string(),
  id: z.string(),
  role: z.enum(["user", "assistant"]),
  parentId: z.string().nullable(),
  createdAt: z.string(),
});

export const ExtractMemoriesInput = {
  messages: z
    .array(z.object({ role: z.enum(["user", "assistant", "system"]), content: z.string().max(16_000), id: z.string().min(1).max(128).optional() }))
    .min(1)
    .max(100)
    .describe("the conversation to learn from, oldest first"),
  workspace_id: WorkspaceId.optional(),
  session_id: z.string().min(1).max(256).optional().describe("the conversation's id, recorded as the source"),
  dry_run: z.boolean().optional().describe("true: answer the decisions without applying them"),
};
export const ExtractMemoriesOutput = z.object({
  applied: z.boolean(),
  model: z.string(),
  facts: z.array(z.string()),
  decisions: z.array(
    z.object({
      fact: z.string(),
      action: z.enum(["add", "update", "delete", "none"]),
      memoryId: z.string().nullable(),
      content: z.string().nullable(),
      previous: z.string().nullable(),
      reason: z.enum(["duplicate", "missing", "model", "missing_decision"]).optional(),
      proposed: z.literal(true).optional(),
      proposalId: z.string().optional(),
    }),
  ),
});

export const ListProposalsInput = {
  limit: z.int().min(1).max(1000).optional().describe("page size; default 100"),
  cursor: z.string().min(1).max(1024).optional().describe("nextCursor of the previous page"),
};
export const ProposalIdInput = { id: z.string().min(1).max(256).describe("the proposal id (prop_…)") };
export const ProposalOutput = z.object({
  id: z.string(),
  memoryId: z.string(),
  memory: Memory.nullable().describe("the memory as it is now; null once deleted"),
  workspaceId: z.string().nullable(),
  action: z.enum(["update", "delete"]),
  content: z.string().nullable().describe("update: the proposed text"),
  threadId: z.string().nullable(),
  messageIds: z.array(z.string()),
  model: z.string().nullable(),
  createdAt: z.string(),
  status: z.enum(["pending", "accepted", "rejected"]),
});
export const ListProposalsOutput = z.object({ proposals: z.array(ProposalOutput), nextCursor: z.string().nullable(), hasMore: z.boolean() });
