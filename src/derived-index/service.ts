import type { Store } from "../db/store";
import { payloadTooLarge } from "../errors/app-error";
import type { ChatRepository } from "../chats/repository";
import type { IndexViewRepository } from "../documents/index-view";
import type { DocumentRepository } from "../documents/repository";
import { partitionWhere } from "../search/filters";
import type { Indexer } from "../search/indexer";
import type { LanceStore } from "../search/lance-store";
import { textTable } from "../search/partitions";
import type { Outbox } from "../search/outbox";
import type { ArtifactKind, ArtifactRepository } from "../workspaces/repository";
import type { WorkspaceService } from "../workspaces/service";
import { deriveEdges } from "./edges";
import { MAX_ARTIFACT_BYTES, type DerivedBlockIndex, type LegacyIndexStatus } from "./model";
import type { DerivedIndexRepository } from "./repository";

/** Block edges as stored (any object or array) or derived (an array). */
type EdgesValue = Record<string, unknown> | unknown[];

export interface DerivedIndexDeps {
  workspaces: WorkspaceService;
  documents: DocumentRepository;
  view: IndexViewRepository;
  chats: ChatRepository;
  artifacts: ArtifactRepository;
  repo: DerivedIndexRepository;
  outbox: Outbox;
  indexer: Indexer;
  lance: LanceStore;
  embedderSpace: string | null;
  store: Store;
}

/**
 * A workspace's derived search artifacts: its index status, the index view (raw and as
 * a block index), clear and reindex, and the client-stored manifest, index and edges.
 */
export function createDerivedIndexService(d: DerivedIndexDeps) {
  const { workspaces, view, artifacts, outbox, indexer, store } = d;

  async function status(ownerId: string, workspaceId: string): Promise<LegacyIndexStatus> {
    // Read-your-writes, as search does: this owner's acknowledged changes reach the index first.
    await indexer.flush(ownerId);
    const counts = await d.repo.viewCounts(store.db, ownerId, workspaceId);
    const pending = await d.repo.pending(store.db, ownerId, workspaceId);
    await indexer.followWriter();
    const blocksWhere = partitionWhere(["block"], { workspaceId });
    const vectorTable = indexer.vectorTableFor(ownerId, "doc");
    const stats = await indexer.stats();
    const [blocks, vectors, messages] = await Promise.all([
      d.lance.countRows(textTable(ownerId, "doc"), blocksWhere),
      vectorTable ? d.lance.countRows(vectorTable, blocksWhere) : Promise.resolve(0),
      d.lance.countRows(textTable(ownerId, "doc"), partitionWhere(["message"], { workspaceId })),
    ]);
    return {
      workspaceId,
      status: pending.text + pending.vector > 0 ? "indexing" : "ready",
      documents: {
        stored: counts.documents, indexed: counts.indexedDocuments, unindexed: counts.unindexedDocuments,
        stale: counts.staleDocuments, outdated: counts.outdatedDocuments,
      },
      blocks, vectors, messages, pending,
      lastIndexedAt: counts.lastIndexedAt,
      indexerLastRunAt: stats.lastIndexedAt,
      embeddingModel: d.embedderSpace,
      vectorDimension: stats.vectorDimension,
    };
  }

  async function derivedIndex(ownerId: string, workspaceId: string): Promise<DerivedBlockIndex> {
    const documents = (await view.listByWorkspace(store.db, ownerId, workspaceId)).map((doc) => ({
      id: doc.documentId, title: doc.title, documentType: doc.documentType, indexedAt: doc.indexedAt,
      blocks: doc.blocks.map(({ id, type, content }) => ({ id, type, content })),
    }));
    return { version: 1, source: "derived", workspaceId, documents, blockCount: documents.reduce((n, doc) => n + doc.blocks.length, 0) };
  }

  async function putArtifact<T>(ownerId: string, workspaceId: string, kind: ArtifactKind, field: string, value: T): Promise<T> {
    await workspaces.requireOwned(ownerId, workspaceId);
    const size = Buffer.byteLength(JSON.stringify(value), "utf8");
    if (size > MAX_ARTIFACT_BYTES) throw payloadTooLarge(`${field}: is ${size} bytes; the limit is ${MAX_ARTIFACT_BYTES} bytes (5 MB)`);
    await artifacts.put(store.db, ownerId, workspaceId, kind, value, new Date().toISOString());
    return value;
  }

  return {
    async status(ownerId: string, workspaceId: string): Promise<LegacyIndexStatus> {
      await workspaces.requireOwned(ownerId, workspaceId);
      return status(ownerId, workspaceId);
    },

    async raw(ownerId: string, workspaceId: string): Promise<DerivedBlockIndex> {
      await workspaces.requireOwned(ownerId, workspaceId);
      return derivedIndex(ownerId, workspaceId);
    },

    /** Empties the workspace's index view (its documents leave search) and drops a stored block index. */
    async clear(ownerId: string, workspaceId: string) {
      await workspaces.requireOwned(ownerId, workspaceId);
      const removed = await store.transaction(async (tx) => {
        const docs = await view.listByWorkspace(tx, ownerId, workspaceId);
        for (const doc of docs) {
          await view.delete(tx, ownerId, doc.documentId);
          await outbox.enqueue(tx, { ownerId, kind: "block", sourceId: doc.documentId }, "sync");
        }
        await artifacts.delete(tx, ownerId, workspaceId, "block_index");
        return docs.length;
      });
      await indexer.flush(ownerId);
      return { success: true as const, message: `cleared ${removed} document(s) from the index of workspace ${workspaceId}` };
    },

    /**
     * Rebuilds the index view from the stored documents: every document is snapshotted
     * again, entries of deleted documents (legacy deletes) are removed, threads re-synced.
     */
    async reindex(ownerId: string, workspaceId: string) {
      await workspaces.requireOwned(ownerId, workspaceId);
      const { reindexed, stale } = await store.transaction(async (tx) => {
        const now = new Date().toISOString();
        const docs = await d.documents.listFull(tx, ownerId, workspaceId);
        const live = new Set(docs.map((doc) => doc.id));
        let stale = 0;
        for (const entry of await view.listByWorkspace(tx, ownerId, workspaceId)) {
          if (live.has(entry.documentId)) continue;
          await view.delete(tx, ownerId, entry.documentId);
          await outbox.enqueue(tx, { ownerId, kind: "block", sourceId: entry.documentId }, "sync");
          stale++;
        }
        for (const doc of docs) {
          const fresh = await view.put(tx, {
            ownerId, documentId: doc.id, workspaceId, documentType: doc.documentType, title: doc.title, metadata: doc.metadata,
            blocks: doc.indexableBlocks.map(({ id, type, content }) => ({ id, type, content })), createdAt: doc.createdAt, indexedAt: now,
          });
          await outbox.enqueue(tx, { ownerId, kind: "block", sourceId: doc.id }, fresh ? "insert" : "sync");
        }
        for (const thread of await d.chats.listThreads(tx, ownerId, workspaceId)) {
          await outbox.enqueue(tx, { ownerId, kind: "message", sourceId: thread.id }, "sync");
        }
        await artifacts.delete(tx, ownerId, workspaceId, "block_index");
        return { reindexed: docs.length, stale };
      });
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
      const stored = (await artifacts.get(store.db, ownerId, workspaceId, "block_index")) as Record<string, unknown> | undefined;
      return stored ?? (await derivedIndex(ownerId, workspaceId));
    },
    putBlockIndex: (ownerId: string, workspaceId: string, index: Record<string, unknown>) =>
      putArtifact(ownerId, workspaceId, "block_index", "index", index),

    /** The client's stored manifest, else a derived summary of the workspace's vectors. */
    async manifest(ownerId: string, workspaceId: string): Promise<Record<string, unknown>> {
      await workspaces.requireOwned(ownerId, workspaceId);
      const stored = (await artifacts.get(store.db, ownerId, workspaceId, "vector_manifest")) as Record<string, unknown> | undefined;
      if (stored) return stored;
      const current = await status(ownerId, workspaceId);
      return {
        version: 1, source: "derived", workspaceId, embeddingModel: current.embeddingModel, dimension: current.vectorDimension,
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
    putEdges: (ownerId: string, workspaceId: string, edges: EdgesValue) => putArtifact(ownerId, workspaceId, "block_edges", "edges", edges),
  };
}
export type DerivedIndexService = ReturnType<typeof createDerivedIndexService>;
