import { all, first, sql, type Executor } from "../db/store";

/** How a workspace's stored documents and its index view line up. */
export interface ViewCounts {
  documents: number;
  indexedDocuments: number;
  unindexedDocuments: number;
  staleDocuments: number;
  outdatedDocuments: number;
  lastIndexedAt: string | null;
}

// Aliases are snake_case: PostgreSQL folds unquoted identifiers to lower case.
type StoredCounts = {
  documents: number; indexed_documents: number; unindexed_documents: number; stale_documents: number; outdated_documents: number;
  last_indexed_at: string | null;
};

/**
 * Read-only bookkeeping queries across the document store, the index view, chat
 * threads and the outbox, for the status route. Scoped by owner and workspace.
 */
export function createDerivedIndexRepository() {
  return {
    async viewCounts(tx: Executor, ownerId: string, workspaceId: string): Promise<ViewCounts> {
      const r = (await first<StoredCounts>(
        tx,
        sql`SELECT
          (SELECT COUNT(*) FROM documents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId}) AS documents,
          (SELECT COUNT(*) FROM indexed_documents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId}) AS indexed_documents,
          (SELECT COUNT(*) FROM documents d WHERE d.owner_id = ${ownerId} AND d.workspace_id = ${workspaceId}
             AND NOT EXISTS (SELECT 1 FROM indexed_documents v WHERE v.owner_id = d.owner_id AND v.document_id = d.id)) AS unindexed_documents,
          (SELECT COUNT(*) FROM indexed_documents v WHERE v.owner_id = ${ownerId} AND v.workspace_id = ${workspaceId}
             AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.owner_id = v.owner_id AND d.id = v.document_id)) AS stale_documents,
          (SELECT COUNT(*) FROM indexed_documents v JOIN documents d ON d.owner_id = v.owner_id AND d.id = v.document_id
             WHERE v.owner_id = ${ownerId} AND v.workspace_id = ${workspaceId} AND d.updated_at > v.indexed_at) AS outdated_documents,
          (SELECT MAX(indexed_at) FROM indexed_documents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId}) AS last_indexed_at`,
      ))!;
      return {
        documents: r.documents, indexedDocuments: r.indexed_documents, unindexedDocuments: r.unindexed_documents,
        staleDocuments: r.stale_documents, outdatedDocuments: r.outdated_documents, lastIndexedAt: r.last_indexed_at,
      };
    },
    /** Outbox rows still waiting for this workspace's documents and threads. */
    async pending(tx: Executor, ownerId: string, workspaceId: string): Promise<{ text: number; vector: number }> {
      const rows = await all<{ stage: "text" | "vector"; n: number }>(
        tx,
        sql`SELECT stage, COUNT(*) AS n FROM outbox o
            WHERE o.owner_id = ${ownerId} AND (
              (o.kind = 'block' AND (
                o.source_id IN (SELECT id FROM documents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId})
                OR o.source_id IN (SELECT document_id FROM indexed_documents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId})))
              OR (o.kind = 'message' AND o.source_id IN (SELECT id FROM chat_threads WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId})))
            GROUP BY stage`,
      );
      const out = { text: 0, vector: 0 };
      for (const row of rows) out[row.stage] = row.n;
      return out;
    },
  };
}
export type DerivedIndexRepository = ReturnType<typeof createDerivedIndexRepository>;
