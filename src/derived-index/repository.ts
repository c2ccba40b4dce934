import { workspaceMessageSources } from "../chats";
import { all, chunks, first, list, run, sql, type Executor } from "../db/store";
import { workspaceBlockSources, workspaceViewCounts } from "../documents";
import type { OutboxOp } from "../search";

/**
 * Read-only bookkeeping queries over the outbox for the status route, scoped by owner and
 * workspace; which sources are a workspace's is for documents and chats to say.
 */
export function createDerivedIndexRepository() {
  return {
    viewCounts: workspaceViewCounts,
    /** Outbox rows still waiting for this workspace's documents and threads. */
    async pending(tx: Executor, ownerId: string, workspaceId: string): Promise<{ text: number; vector: number }> {
      const rows = await all<{ stage: "text" | "vector"; n: number }>(
        tx,
        sql`SELECT stage, COUNT(*) AS n FROM outbox o
            WHERE o.owner_id = ${ownerId} AND (
              (o.kind = 'block' AND ${workspaceBlockSources(sql.raw("o.source_id"), ownerId, workspaceId)})
              OR (o.kind = 'message' AND ${workspaceMessageSources(sql.raw("o.source_id"), ownerId, workspaceId)}))
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
