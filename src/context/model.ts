import { t } from "elysia";
import { StrictInteger } from "../shared/query";
import { Mode, RankedBy, SearchSignals, Strategy } from "../shared/schemas";
import { SearchFilters } from "../shared/search-filters";

export const BuildContextBody = t.Object({
  query: t.String({ minLength: 1, maxLength: 10_000 }),
  workspace_id: t.Optional(t.String({ minLength: 1, maxLength: 256 })),
  workspaceId: t.Optional(t.String({ minLength: 1, maxLength: 256 })),
  limit: t.Optional(StrictInteger({ minimum: 1, maximum: 50, description: "default 10" })),
  include: t.Optional(
    t.Object({
      memories: t.Optional(t.Boolean({ description: "default true" })),
      notes: t.Optional(t.Boolean({ description: "default false" })),
      files: t.Optional(t.Boolean({ description: "default false" })),
    }),
  ),
  filters: t.Optional(SearchFilters),
  minScore: t.Optional(t.Number({ minimum: 0, maximum: 1 })),
  signals: t.Optional(SearchSignals),
});

export const ContextItem = t.Object({
  type: t.Union([t.Literal("memory"), t.Literal("note"), t.Literal("file")]),
  id: t.String({ description: "memory id, block id or file id" }),
  score: t.Number(),
  content: t.String(),
  documentId: t.Optional(t.String({ description: "for notes: the document holding the block" })),
  workspaceId: t.Optional(t.Union([t.String(), t.Null()])),
});

export const BuiltContext = t.Object({
  query: t.String(),
  mode: Mode,
  strategy: Strategy,
  signals: RankedBy,
  items: t.Array(ContextItem),
  contextText: t.String({
    description: "'## Relevant context' then one '- ' bullet per item; '' when there are no items",
  }),
});
export type BuiltContext = typeof BuiltContext.static;
