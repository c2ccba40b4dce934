import { all, chunks, first, list, run, sql, type Executor } from "../db/store";
import type { OutboxOp } from "../search";

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
  documents: number;
  indexed_documents: number;
  unindexed_documents: number;
  stale_documents: number;
  outdated_documents: number;
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
        documents: r.documents,
        indexedDocuments: r.indexed_documents,
        unindexedDocuments: r.unindexed_documents,
        staleDocuments: r.stale_documents,
        outdatedDocuments: r.outdated_documents,
        lastIndexedAt: r.last_indexed_at,
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
              OR (o.kind = 'message' AND o.source_id IN (
                SELECT m.id FROM chat_messages m JOIN chat_threads t ON t.owner_id = m.owner_id AND t.id = m.thread_id
                WHERE t.owner_id = ${ownerId} AND t.workspace_id = ${workspaceId})))
            GROUP BY stage`,
      );
      const out = { text: 0, vector: 0 };
      for (const row of rows) out[row.stage] = row.n;
      return out;
    },
    /**
     * Whether the embedder is failing: some vector row (anyone's: the embedder is shared)
     * has failed and waits for a retry. While it fails, the indexer stops trying the rest.
     */
    async embedderFailing(tx: Executor): Promise<boolean> {
      return (
        (await first(tx, sql`SELECT 1 AS one FROM outbox WHERE stage = 'vector' AND attempts > 0 LIMIT 1`)) !== null
      );
    },
    /**
     * Queues sources of one owner and kind for the indexer, once each: rows still pending
     * for them (either stage) are replaced by one new text row, so repeated reindexes
     * never pile up jobs (a vector row would otherwise wait per reindex while the embedder
     * is down). The indexer re-reads a source's current state, so the new row covers the
     * old ones; it is a plain `insert` only for a source new to the index (`fresh`) with
     * nothing pending (an older row may already have reached the index).
     * Replacing rather than skipping is safe against the indexer: a row it is working on
     * right now may be deleted here, and the new row makes it run again.
     */
    async requeue(
      tx: Executor,
      ownerId: string,
      kind: "block" | "message",
      ids: string[],
      fresh: ReadonlySet<string> = new Set(),
    ) {
      const byOp: Record<OutboxOp, string[]> = { insert: [], sync: [], rebuild: [] };
      for (const chunk of chunks(ids)) {
        const pending = new Set(
          (
            await all<{ source_id: string }>(
              tx,
              sql`SELECT DISTINCT source_id FROM outbox WHERE owner_id = ${ownerId} AND kind = ${kind} AND source_id IN ${list(chunk)}`,
            )
          ).map((r) => r.source_id),
        );
        if (pending.size) {
          await run(
            tx,
            sql`DELETE FROM outbox WHERE owner_id = ${ownerId} AND kind = ${kind} AND source_id IN ${list([...pending])}`,
          );
        }
        for (const id of chunk) byOp[fresh.has(id) && !pending.has(id) ? "insert" : "sync"].push(id);
      }
      return byOp;
    },
  };
}
export type DerivedIndexRepository = ReturnType<typeof createDerivedIndexRepository>;
