import { t } from "elysia";

/** A free-form JSON object (metadata, payloads): stored and returned as sent. */
export const FreeObject = t.Object({}, { additionalProperties: true, description: "arbitrary JSON object" });

/** A JSON scalar: what an equality filter compares. */
export const Scalar = t.Union([t.String(), t.Number(), t.Boolean(), t.Null()]);

/** A path or body reference to a workspace; existence and ownership are checked by the service. */
export const WorkspaceId = t.String({ minLength: 1, maxLength: 256, description: "a workspace id (ws_…)" });
/** The path parameter of every route under `/v1/workspaces/:workspaceId`. */
export const WorkspaceParams = t.Object({ workspaceId: WorkspaceId });

/** How a search ranked (docs/retrieval.md#ranking): `semantic` when vectors took part, `fulltext_fallback` otherwise. */
export const Mode = t.Union([t.Literal("semantic"), t.Literal("fulltext_fallback")]);
export const Strategy = t.Union([t.Literal("hybrid"), t.Literal("vector"), t.Literal("fulltext")]);

/** The time a memory refers to (its `createdAt`): ISO 8601 or Unix seconds; checked by src/shared/timestamp.ts. */
export const Timestamp = t.Union([t.String({ minLength: 1, maxLength: 64 }), t.Number()], {
  description:
    "when the memory happened, as ISO 8601 (2023-05-07, 2023-05-07T13:45:00Z; UTC without an offset) or Unix seconds; default now",
});

const Signal = t.Union([t.Literal("text"), t.Literal("words"), t.Literal("time"), t.Literal("vector")]);
/** The signals that ranked a search's results (a response field). */
export const RankedBy = t.Array(Signal, {
  description:
    "the signals that ranked: text (full text), words (the word-vector layer), time (dates named in the query), vector (the embedding model)",
});
/** A hit's score by each signal that ranked it (the fused score is their weighted mean). */
export const HitSignalScores = t.Object(
  {
    text: t.Optional(t.Number()),
    words: t.Optional(t.Number()),
    time: t.Optional(t.Number()),
    vector: t.Optional(t.Number()),
  },
  { description: "this hit's score by each signal that took part, each in [0, 1]" },
);
/** The ranking signals a search may be limited to (the recall bench's ablations). */
export const SearchSignals = t.Array(Signal, {
  minItems: 1,
  maxItems: 4,
  uniqueItems: true,
  description:
    "rank with these signals only (text: full text, words: word vectors, time: dates in the query, vector: the embedding model); default all available",
});
