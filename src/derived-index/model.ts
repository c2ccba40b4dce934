import { t } from "elysia";
import { MB, type BodyLimit } from "../lib/body-limits";
import { FreeObject } from "../shared/schemas";

/** Largest stored artifact (PUT block index, vector manifest, block edges). */
export const MAX_ARTIFACT_BYTES = 5 * 1024 * 1024;

const Count = t.Integer({ minimum: 0 });

/** The contract leaves LegacyIndexStatus open; this is Mnemo's definition (docs/api.md#derived-index-and-manifests). */
export const LegacyIndexStatus = t.Object({
  workspaceId: t.String(),
  status: t.Union([t.Literal("ready"), t.Literal("indexing")], {
    description:
      "indexing while this workspace has outbox rows pending, except vector rows that cannot run now (see note)",
  }),
  note: t.Union([t.String(), t.Null()], {
    description:
      "set when vector jobs wait for an embedding model (none configured, or it fails): status is ready, search is full-text",
  }),
  documents: t.Object(
    {
      stored: Count,
      indexed: Count,
      unindexed: Count,
      stale: Count,
      outdated: Count,
    },
    {
      description:
        "stored: documents in the store (both views); indexed: documents in the index view; unindexed: stored but not in the view " +
        "(legacy writes, cleared); stale: in the view but deleted (legacy deletes); outdated: changed by a legacy write since indexed",
    },
  ),
  blocks: t.Integer({
    minimum: 0,
    description:
      "document items of this workspace in the search index (full-text rows): one per document title and one per non-blank block",
  }),
  vectors: t.Integer({
    minimum: 0,
    description: "document block vectors of this workspace in the current vector space",
  }),
  messages: t.Integer({ minimum: 0, description: "chat messages of this workspace in the search index" }),
  pending: t.Object(
    { text: Count, vector: Count },
    { description: "outbox rows of this workspace's documents and threads, by stage" },
  ),
  lastIndexedAt: t.Union([t.String({ format: "date-time" }), t.Null()], {
    description: "when a unified write or reindex last put a document of this workspace into the index view",
  }),
  indexerLastRunAt: t.Union([t.String({ format: "date-time" }), t.Null()], {
    description: "when this server's indexer last wrote a batch",
  }),
  embeddingModel: t.Union([t.String(), t.Null()], {
    description: "the vector space (provider:model); null when search is full-text only",
  }),
  vectorDimension: t.Union([t.Integer(), t.Null()]),
});
export type LegacyIndexStatus = typeof LegacyIndexStatus.static;

export const IndexedBlockView = t.Object({ id: t.String(), type: t.String(), content: t.String() });
/** What the server indexes for a workspace, derived from the index view. */
export const DerivedBlockIndex = t.Object({
  version: t.Literal(1),
  source: t.Literal("derived"),
  workspaceId: t.String(),
  documents: t.Array(
    t.Object({
      id: t.String(),
      title: t.String(),
      documentType: t.String(),
      indexedAt: t.String({ format: "date-time" }),
      blocks: t.Array(IndexedBlockView),
    }),
  ),
  blockCount: t.Integer({ description: "blocks of the documents on this page" }),
  nextCursor: t.Union([t.String(), t.Null()], { description: "pass as ?cursor= for the next page; null on the last" }),
  hasMore: t.Boolean(),
});
export type DerivedBlockIndex = typeof DerivedBlockIndex.static;

export const ClearResult = t.Object({ success: t.Literal(true), message: t.String() });
export const ReindexResult = t.Object({
  message: t.String(),
  status: LegacyIndexStatus.properties.status,
  indexStatus: LegacyIndexStatus,
});

/** The body of a manifest, block index or edges PUT: 5 MB, escaped. */
export const ARTIFACT_BODY_LIMIT: BodyLimit = { bytes: 12 * MB, nodes: 1_000_000 };
export const BlockIndexBody = t.Object({ index: FreeObject });
export const BlockIndexEnvelope = t.Object({ index: FreeObject });
export const ManifestBody = t.Object({ manifest: FreeObject });
export const ManifestEnvelope = t.Object({ manifest: FreeObject });
const Edges = t.Union([FreeObject, t.Array(t.Unknown())], {
  description: "an object or an array; derived edges are an array",
});
export const EdgesBody = t.Object({ edges: Edges });
export const EdgesEnvelope = t.Object({ edges: Edges });
