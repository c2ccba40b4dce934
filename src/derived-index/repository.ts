import { workspaceMessageSources } from "../chats";
import type { Executor } from "../db/store";
import { workspaceBlockSources, workspaceViewCounts } from "../documents";
import { pendingFor, takePending, vectorRetriesWaiting, type OutboxOp } from "../search";

/**
 * The derived index's bookkeeping for the status route, scoped by owner and workspace:
 * which sources are a workspace's is for documents and chats to say, what the outbox holds
 * for them is for search to say.
 */
export function createDerivedIndexRepository() {
  return {
    viewCounts: workspaceViewCounts,
    /** Outbox rows still waiting for this workspace's documents and threads. */
    pending(tx: Executor, ownerId: string, workspaceId: string): Promise<{ text: number; vector: number }> {
      return pendingFor(tx, ownerId, [
        { kind: "block", holds: (column) => workspaceBlockSources(column, ownerId, workspaceId) },
        { kind: "message", holds: (column) => workspaceMessageSources(column, ownerId, workspaceId) },
      ]);
    },
    /**
     * Whether the embedder is failing: some vector row (anyone's: the embedder is shared)
     * has failed and waits for a retry. While it fails, the indexer stops trying the rest.
     */
    embedderFailing: (tx: Executor): Promise<boolean> => vectorRetriesWaiting(tx),
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
      const pending = await takePending(tx, ownerId, kind, ids);
      for (const id of ids) byOp[fresh.has(id) && !pending.has(id) ? "insert" : "sync"].push(id);
      return byOp;
    },
  };
}
export type DerivedIndexRepository = ReturnType<typeof createDerivedIndexRepository>;
