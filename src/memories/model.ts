import { t } from "elysia";
import { KB, type BodyLimit } from "../lib/body-limits";
import { IntegerParam, StrictInteger } from "../shared/query";
import { FreeObject, HitSignalScores, Mode, RankedBy, SearchSignals, Strategy, Timestamp } from "../shared/schemas";
import { SearchFilters } from "../shared/search-filters";

/** Memory content limit (docs/api.md#requests-and-limits): 50 KB of UTF-8. */
export const MAX_CONTENT_BYTES = 51_200;
export const MAX_METADATA_BYTES = 16_384;
/** A memory's body: 51,200 bytes of content plus 16 KB of metadata, each up to twice its size once escaped. */
export const MEMORY_BODY_LIMIT: BodyLimit = { bytes: 512 * KB };

const Id = t.String({
  minLength: 1,
  maxLength: 128,
  pattern: "^[A-Za-z0-9][A-Za-z0-9_.:-]*$",
  description: "letters, digits, _ . : -",
});
const Scope = t.String({ minLength: 1, maxLength: 256 });

export const MemoryRecord = t.Object({
  id: t.String({ description: "mem_ + a sortable id, or the custom id given on create" }),
  ownerId: t.String(),
  projectId: t.String({ description: "the memory's workspace id, or 'default'" }),
  content: t.String(),
  metadata: FreeObject,
  status: t.Literal("active"),
  workspaceId: t.Union([t.String(), t.Null()]),
  session_id: t.Union([t.String(), t.Null()]),
  createdAt: t.String({ format: "date-time" }),
  updatedAt: t.String({ format: "date-time" }),
});
export type MemoryRecord = typeof MemoryRecord.static;

export const CreateMemoryBody = t.Object({
  content: t.String({ minLength: 1, description: "the memory, at most 51,200 bytes of UTF-8" }),
  id: t.Optional(Id),
  metadata: t.Optional(FreeObject),
  workspaceId: t.Optional(Scope),
  workspace_id: t.Optional(Scope),
  session_id: t.Optional(Scope),
  sessionId: t.Optional(Scope),
  timestamp: t.Optional(Timestamp),
});

export const ListMemoriesQuery = t.Object({
  limit: t.Optional(IntegerParam("default 100, at most 1000")),
  cursor: t.Optional(
    t.String({ minLength: 1, description: "nextCursor of the previous page (given with the same filters)" }),
  ),
  workspaceId: t.Optional(t.String({ minLength: 1, maxLength: 256, description: "only memories of this workspace" })),
  session_id: t.Optional(t.String({ minLength: 1, maxLength: 256, description: "only memories of this session" })),
  from: t.Optional(
    t.String({
      minLength: 1,
      maxLength: 64,
      description: "only memories created at or after this ISO time (a YYYY-MM-DD day: its start, UTC)",
    }),
  ),
  to: t.Optional(
    t.String({
      minLength: 1,
      maxLength: 64,
      description: "only memories created at or before this ISO time (a YYYY-MM-DD day: its end, UTC)",
    }),
  ),
});

export const UpdateMemoryBody = t.Object(
  {
    content: t.Optional(t.String({ minLength: 1, description: "the new content, at most 51,200 bytes of UTF-8" })),
    metadata: t.Optional(FreeObject),
  },
  {
    additionalProperties: false,
    description: "at least one of content and metadata; metadata replaces the whole object",
  },
);

export const MemoryList = t.Object({
  data: t.Array(MemoryRecord),
  nextCursor: t.Union([t.String(), t.Null()], { description: "pass as ?cursor= for the next page; null on the last" }),
  hasMore: t.Boolean(),
});

export const DeletedMemory = t.Object({ id: t.String(), deleted: t.Literal(true), success: t.Literal(true) });

export const SearchMemoriesBody = t.Object({
  query: t.String({ minLength: 1, maxLength: 10_000 }),
  limit: t.Optional(StrictInteger({ minimum: 1, maximum: 100, description: "default 10" })),
  filters: t.Optional(SearchFilters),
  minScore: t.Optional(t.Number({ minimum: 0, maximum: 1, description: "drop results scoring below this" })),
  signals: t.Optional(SearchSignals),
});

export const ScoredMemory = t.Composite([MemoryRecord, t.Object({ score: t.Number(), signals: HitSignalScores })]);

export const SearchMemoriesResponse = t.Object({
  results: t.Array(ScoredMemory),
  data: t.Array(ScoredMemory, { description: "same as results (the spec's other description)" }),
  mode: Mode,
  strategy: Strategy,
  signals: RankedBy,
});

export const MemoryParams = t.Object({ id: t.String({ minLength: 1, maxLength: 256 }) });

export const MemoryVersionSchema = t.Object({
  version: t.Integer({ minimum: 1, description: "1 for the oldest" }),
  event: t.Union([t.Literal("created"), t.Literal("updated"), t.Literal("deleted")]),
  reason: t.String({ description: "the event in words" }),
  content: t.String({
    description:
      "the content after the write (created, updated), as it was when deleted by extraction, '' once the user deleted it",
  }),
  metadata: FreeObject,
  workspaceId: t.Union([t.String(), t.Null()]),
  changedAt: t.String({ format: "date-time" }),
  source: t.Union(
    [
      t.Literal("api"),
      t.Literal("app"),
      t.Literal("mcp"),
      t.Literal("cli"),
      t.Literal("import"),
      t.Literal("extraction"),
      t.Literal("unknown"),
    ],
    {
      description:
        "how the version was written (app: the web app; cli: mnemo's memory commands); unknown: stored before history was kept",
    },
  ),
  threadId: t.Optional(
    t.Union([t.String(), t.Null()], { description: "extraction: the chat thread (or session) it came from" }),
  ),
  messageIds: t.Optional(t.Array(t.String(), { description: "extraction: the messages it came from" })),
  model: t.Optional(t.Union([t.String(), t.Null()], { description: "extraction: the model that proposed it" })),
  proposalId: t.Optional(
    t.String({ description: "extraction the person accepted: the proposal (GET /v1/memories/proposals)" }),
  ),
});
export type MemoryVersionRecord = typeof MemoryVersionSchema.static;

export const MemoryHistory = t.Object({
  id: t.String(),
  data: t.Array(MemoryVersionSchema, { description: "oldest first" }),
});

export const MemoryProposal = t.Object({
  id: t.String({ description: "prop_…" }),
  memoryId: t.String(),
  memory: t.Union([MemoryRecord, t.Null()], { description: "the memory as it is now; null once deleted" }),
  workspaceId: t.Union([t.String(), t.Null()]),
  action: t.Union([t.Literal("update"), t.Literal("delete")]),
  content: t.Union([t.String(), t.Null()], { description: "update: the proposed text; delete: null" }),
  threadId: t.Union([t.String(), t.Null()], { description: "the captured chat thread it came from" }),
  messageIds: t.Array(t.String(), { description: "the messages it came from" }),
  model: t.Union([t.String(), t.Null()], { description: "the memory model that proposed it" }),
  createdAt: t.String({ format: "date-time" }),
  status: t.Union([t.Literal("pending"), t.Literal("accepted"), t.Literal("rejected")]),
});
export type MemoryProposalRecord = typeof MemoryProposal.static;

export const MemoryProposalList = t.Object({
  data: t.Array(MemoryProposal, { description: "pending proposals, oldest first" }),
  nextCursor: t.Union([t.String(), t.Null()], { description: "pass as ?cursor= for the next page; null on the last" }),
  hasMore: t.Boolean(),
});

export const ListProposalsQuery = t.Object({
  limit: t.Optional(IntegerParam("default 100, at most 1000")),
  cursor: t.Optional(t.String({ minLength: 1, description: "nextCursor of the previous page" })),
});

export const ProposalParams = t.Object({ id: t.String({ minLength: 1, maxLength: 256 }) });
