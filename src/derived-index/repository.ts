import type { Database } from "bun:sqlite";

/** How a workspace's stored documents and its index view line up. */
export interface ViewCounts {
  documents: number;
  indexedDocuments: number;
  unindexedDocuments: number;
  staleDocuments: number;
  outdatedDocuments: number;
  lastIndexedAt: string | null;
}

/**
 * Read-only bookkeeping queries across the document store, the index view, chat
 * threads and the outbox, for the status route. Scoped by owner and workspace.
 */
export function createDerivedIndexRepository(db: Database) {
  const counts = db.query<ViewCounts, [string, string]>(`
    SELECT
      (SELECT COUNT(*) FROM documents WHERE owner_id = ?1 AND workspace_id = ?2) AS documents,
      (SELECT COUNT(*) FROM indexed_documents WHERE owner_id = ?1 AND workspace_id = ?2) AS indexedDocuments,
      (SELECT COUNT(*) FROM documents d WHERE d.owner_id = ?1 AND d.workspace_id = ?2
         AND NOT EXISTS (SELECT 1 FROM indexed_documents v WHERE v.owner_id = d.owner_id AND v.document_id = d.id)) AS unindexedDocuments,
      (SELECT COUNT(*) FROM indexed_documents v WHERE v.owner_id = ?1 AND v.workspace_id = ?2
         AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.owner_id = v.owner_id AND d.id = v.document_id)) AS staleDocuments,
      (SELECT COUNT(*) FROM indexed_documents v JOIN documents d ON d.owner_id = v.owner_id AND d.id = v.document_id
         WHERE v.owner_id = ?1 AND v.workspace_id = ?2 AND d.updated_at > v.indexed_at) AS outdatedDocuments,
      (SELECT MAX(indexed_at) FROM indexed_documents WHERE owner_id = ?1 AND workspace_id = ?2) AS lastIndexedAt
  `);
  const pending = db.query<{ stage: "text" | "vector"; n: number }, [string, string]>(`
    SELECT stage, COUNT(*) AS n FROM outbox o
    WHERE o.owner_id = ?1 AND (
      (o.kind = 'block' AND (
        o.source_id IN (SELECT id FROM documents WHERE owner_id = ?1 AND workspace_id = ?2)
        OR o.source_id IN (SELECT document_id FROM indexed_documents WHERE owner_id = ?1 AND workspace_id = ?2)))
      OR (o.kind = 'message' AND o.source_id IN (SELECT id FROM chat_threads WHERE owner_id = ?1 AND workspace_id = ?2)))
    GROUP BY stage
  `);
  return {
    viewCounts(ownerId: string, workspaceId: string): ViewCounts {
      return counts.get(ownerId, workspaceId)!;
    },
    /** Outbox rows still waiting for this workspace's documents and threads. */
    pending(ownerId: string, workspaceId: string): { text: number; vector: number } {
      const out = { text: 0, vector: 0 };
      for (const row of pending.all(ownerId, workspaceId)) out[row.stage] = row.n;
      return out;
    },
  };
}
export type DerivedIndexRepository = ReturnType<typeof createDerivedIndexRepository>;
