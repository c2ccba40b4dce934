import type { Store } from "../db/store";
import { payloadTooLarge } from "../shared/app-error";
import type { Cursors } from "../shared/cursors";
import type { ChatReads } from "../chats/service";
import type { IndexedDocument } from "../documents/index-view";
import type { DocumentReads, IndexViewAccess } from "../documents/service";
import { pager, type PageRequest } from "../shared/pagination";
import type { IndexingControl, Outbox, SearchEngine } from "../search";
import type { ArtifactAccess, ArtifactKind, WorkspaceService } from "../workspaces/service";
import { deriveEdges } from "./edges";
import { MAX_ARTIFACT_BYTES, type DerivedBlockIndex, type LegacyIndexStatus } from "./model";
import { createRebuilds } from "./rebuild";
import type { DerivedIndexRepository } from "./repository";

/** Block edges as stored (any object or array) or derived (an array). */
type EdgesValue = Record<string, unknown> | unknown[];

export interface DerivedIndexDeps {
  workspaces: WorkspaceService;
  documents: DocumentReads;
  view: IndexViewAccess;
  chats: ChatReads;
  artifacts: ArtifactAccess;
  repo: DerivedIndexRepository;
  outbox: Outbox;
  indexer: IndexingControl;
  /** What the index holds of a workspace (its status counts). */
  engine: Pick<SearchEngine, "countIndexed">;
  embedderSpace: string | null;
  store: Store;
  cursors: Cursors;
}

/**
 * Why a workspace with pending vector rows reads as ready: the vector stage cannot run
 * (no embedder configured, or it fails and waits for a retry), while full-text search
 * already covers everything. Null when vector work is not blocked.
 */
function blockedVectorsNote(pendingVectors: number, embedderSpace: string | null, failing: boolean): string | null {
  if (pendingVectors === 0 || (embedderSpace !== null && !failing)) return null;
  const why =
    embedderSpace === null
      ? "no embedding model is configured"
      : `the embedding model (${embedderSpace}) cannot answer now; they are retried`;
  return `${pendingVectors} vector job(s) wait for an embedding model: ${why}. Full-text search covers this workspace meanwhile.`;
}

/**
 * A workspace's derived search artifacts: its index status, the index view (raw and as
 * a block index), clear and reindex, and the client-stored manifest, index and edges.
 */
export function createDerivedIndexService(d: DerivedIndexDeps) {
  const { workspaces, view, artifacts, indexer, engine, store } = d;
  const rebuilds = createRebuilds(d);

  async function status(ownerId: string, workspaceId: string): Promise<LegacyIndexStatus> {
    // Read-your-writes, as search does: this owner's acknowledged changes reach the index first.
    await indexer.flush(ownerId);
    const counts = await d.repo.viewCounts(store.db, ownerId, workspaceId);
    const pending = await d.repo.pending(store.db, ownerId, workspaceId);
    const note = blockedVectorsNote(
      pending.vector,
      d.embedderSpace,
      pending.vector > 0 && (await d.repo.embedderFailing(store.db)),
    );
    // The index as the writer last wrote it (another process may be the writer).
    const { items: blocks, withVectors: vectors } = await engine.countIndexed(ownerId, ["block"], { workspaceId });
    const { items: messages } = await engine.countIndexed(ownerId, ["message"], { workspaceId }, { vectors: false });
    const stats = await indexer.stats();
    return {
      workspaceId,
      status: pending.text > 0 || (pending.vector > 0 && note === null) ? "indexing" : "ready",
      note,
      documents: {
        stored: counts.documents,
        indexed: counts.indexedDocuments,
        unindexed: counts.unindexedDocuments,
        stale: counts.staleDocuments,
        outdated: counts.outdatedDocuments,
      },
      blocks,
      vectors,
      messages,
      pending,
      lastIndexedAt: counts.lastIndexedAt,
      indexerLastRunAt: stats.lastIndexedAt,
      embeddingModel: d.embedderSpace,
      vectorDimension: stats.vectorDimension,
    };
  }

  const toRaw = (docs: IndexedDocument[]) =>
    docs.map((doc) => ({
      id: doc.documentId,
      title: doc.title,
      documentType: doc.documentType,
      indexedAt: doc.indexedAt,
      blocks: doc.blocks.map(({ id, type, content }) => ({ id, type, content })),
    }));

  /** The whole derived index of a workspace (the block-index fallback). */
  async function derivedIndex(
    ownerId: string,
    workspaceId: string,
  ): Promise<Omit<DerivedBlockIndex, "nextCursor" | "hasMore">> {
    const documents = toRaw(await view.listByWorkspace(store.db, ownerId, workspaceId));
    return {
      version: 1,
      source: "derived",
      workspaceId,
      documents,
      blockCount: documents.reduce((n, doc) => n + doc.blocks.length, 0),
    };
  }

  async function putArtifact<T>(
    ownerId: string,
    workspaceId: string,
    kind: ArtifactKind,
    field: string,
    value: T,
  ): Promise<T> {
    await workspaces.requireOwned(ownerId, workspaceId);
    const size = Buffer.byteLength(JSON.stringify(value), "utf8");
    if (size > MAX_ARTIFACT_BYTES)
      throw payloadTooLarge(`${field}: is ${size} bytes; the limit is ${MAX_ARTIFACT_BYTES} bytes (5 MB)`);
    await artifacts.put(store.db, ownerId, workspaceId, kind, value, new Date().toISOString());
    return value;
  }

  return {
    async status(ownerId: string, workspaceId: string): Promise<LegacyIndexStatus> {
      await workspaces.requireOwned(ownerId, workspaceId);
      return status(ownerId, workspaceId);
    },

    /** A page of the derived index: documents in creation order, `blockCount` counting this page's blocks. */
    async raw(ownerId: string, workspaceId: string, request: PageRequest): Promise<DerivedBlockIndex> {
      await workspaces.requireOwned(ownerId, workspaceId);
      const paging = pager(d.cursors, ownerId, `index-raw:${workspaceId}`);
      const { limit, after } = paging.start(request);
      const position = after === null ? null : (JSON.parse(after) as { c: string; d: string });
      const rows = await view.pageByWorkspace(
        store.db,
        ownerId,
        workspaceId,
        position && { createdAt: position.c, documentId: position.d },
        limit + 1,
      );
      const page = paging.page(rows, limit, (doc) => JSON.stringify({ c: doc.createdAt, d: doc.documentId }));
      const documents = toRaw(page.items);
      return {
        version: 1,
        source: "derived",
        workspaceId,
        documents,
        blockCount: documents.reduce((n, doc) => n + doc.blocks.length, 0),
        nextCursor: page.nextCursor,
        hasMore: page.hasMore,
      };
    },

    /** Empties the workspace's index view (its documents leave search) and drops a stored block index. */
    async clear(ownerId: string, workspaceId: string) {
      await workspaces.requireOwned(ownerId, workspaceId);
      const removed = await rebuilds.clear(ownerId, workspaceId);
      await artifacts.delete(store.db, ownerId, workspaceId, "block_index");
      await indexer.flush(ownerId);
      return {
        success: true as const,
        message: `cleared ${removed} document(s) from the index of workspace ${workspaceId}`,
      };
    },

    /**
     * Rebuilds the index view from the stored documents, in batches (see `rebuild.ts`):
     * every document is snapshotted again, entries of deleted documents (legacy deletes)
     * are removed, messages re-queued. Queued jobs are never duplicated per source.
     */
    async reindex(ownerId: string, workspaceId: string) {
      await workspaces.requireOwned(ownerId, workspaceId);
      const { reindexed, stale } = await rebuilds.reindex(ownerId, workspaceId);
      await artifacts.delete(store.db, ownerId, workspaceId, "block_index");
      const indexStatus = await status(ownerId, workspaceId);
      return {
        message: `reindexed ${reindexed} document(s) of workspace ${workspaceId}; removed ${stale} stale entr${stale === 1 ? "y" : "ies"}`,
        status: indexStatus.status,
        indexStatus,
      };
    },

    /** The client's stored block index, else the derived one. */
    async blockIndex(ownerId: string, workspaceId: string): Promise<Record<string, unknown>> {
      await workspaces.requireOwned(ownerId, workspaceId);
      const stored = (await artifacts.get(store.db, ownerId, workspaceId, "block_index")) as
        | Record<string, unknown>
        | undefined;
      return stored ?? (await derivedIndex(ownerId, workspaceId));
    },
    putBlockIndex: (ownerId: string, workspaceId: string, index: Record<string, unknown>) =>
      putArtifact(ownerId, workspaceId, "block_index", "index", index),

    /** The client's stored manifest, else a derived summary of the workspace's vectors. */
    async manifest(ownerId: string, workspaceId: string): Promise<Record<string, unknown>> {
      await workspaces.requireOwned(ownerId, workspaceId);
      const stored = (await artifacts.get(store.db, ownerId, workspaceId, "vector_manifest")) as
        | Record<string, unknown>
        | undefined;
      if (stored) return stored;
      const current = await status(ownerId, workspaceId);
      return {
        version: 1,
        source: "derived",
        workspaceId,
        embeddingModel: current.embeddingModel,
        dimension: current.vectorDimension,
        vectors: current.vectors,
      };
    },
    putManifest: (ownerId: string, workspaceId: string, manifest: Record<string, unknown>) =>
      putArtifact(ownerId, workspaceId, "vector_manifest", "manifest", manifest),

    /** The client's stored edges, else edges derived from wiki links and block references. */
    async edges(ownerId: string, workspaceId: string): Promise<EdgesValue> {
      await workspaces.requireOwned(ownerId, workspaceId);
      const stored = (await artifacts.get(store.db, ownerId, workspaceId, "block_edges")) as EdgesValue | undefined;
      return stored ?? deriveEdges(await view.listByWorkspace(store.db, ownerId, workspaceId));
    },
    putEdges: (ownerId: string, workspaceId: string, edges: EdgesValue) =>
      putArtifact(ownerId, workspaceId, "block_edges", "edges", edges),
  };
}
export type DerivedIndexService = ReturnType<typeof createDerivedIndexService>;
