import type { ChatReads } from "../chats/service";
import type { Executor, Store } from "../db/store";
import { snapshotOf } from "../documents/index-view";
import type { DocumentReads, IndexViewAccess } from "../documents/service";
import type { Outbox } from "../search";
import type { DerivedIndexRepository } from "./repository";

/**
 * Documents (or view entries, or messages) per write transaction of a reindex or clear:
 * each transaction stays short, so other writes (on SQLite, every other write) go
 * between the batches and the server keeps answering during a large reindex.
 */
export const REBUILD_BATCH = 200;
/** A batch also stops once its documents hold this much markdown and blocks, so memory stays bounded. */
const REBUILD_BATCH_BYTES = 16 * 1024 * 1024;

export interface RebuildDeps {
  documents: DocumentReads;
  view: IndexViewAccess;
  chats: ChatReads;
  repo: DerivedIndexRepository;
  outbox: Outbox;
  store: Store;
}

/** Reindex and clear of one workspace, batch by batch; see `REBUILD_BATCH`. */
export function createRebuilds(d: RebuildDeps) {
  const { view, repo, outbox, store } = d;

  /** Queues sources once each (see `repo.requeue`), in the batch's transaction. */
  async function requeue(
    tx: Executor,
    ownerId: string,
    kind: "block" | "message",
    ids: string[],
    fresh?: ReadonlySet<string>,
  ) {
    const byOp = await repo.requeue(tx, ownerId, kind, ids, fresh);
    for (const op of ["insert", "sync"] as const) {
      if (byOp[op].length)
        await outbox.enqueueMany(
          tx,
          byOp[op].map((sourceId) => ({ ownerId, kind, sourceId })),
          op,
        );
    }
  }

  /** Visits a workspace's view entries in id-ordered batches, one transaction each. */
  async function eachViewBatch(
    ownerId: string,
    workspaceId: string,
    visit: (tx: Executor, ids: string[]) => Promise<number>,
  ): Promise<number> {
    let total = 0;
    for (let after: string | null = null; ; ) {
      const { count, last } = await store.transaction(async (tx) => {
        const ids = await view.idsByWorkspace(tx, ownerId, workspaceId, after, REBUILD_BATCH);
        return {
          count: ids.length ? await visit(tx, ids) : 0,
          last: ids.length === REBUILD_BATCH ? ids[ids.length - 1] : null,
        };
      });
      total += count;
      if (last === null) return total;
      after = last;
    }
  }

  return {
    /** Removes a workspace's entries from the index view (and so from search); returns how many. */
    async clear(ownerId: string, workspaceId: string): Promise<number> {
      return eachViewBatch(ownerId, workspaceId, async (tx, ids) => {
        for (const id of ids) await view.delete(tx, ownerId, id);
        await requeue(tx, ownerId, "block", ids);
        return ids.length;
      });
    },

    /**
     * Rebuilds a workspace's index view from its stored documents: entries of deleted
     * documents (legacy deletes) are removed, every document is snapshotted again, and
     * every chat message is queued again. Concurrent writes stay correct: each of them
     * snapshots its own document in its own transaction.
     */
    async reindex(ownerId: string, workspaceId: string): Promise<{ reindexed: number; stale: number }> {
      const stale = await eachViewBatch(ownerId, workspaceId, async (tx, ids) => {
        const live = await d.documents.existing(tx, ownerId, ids);
        const gone = ids.filter((id) => !live.has(id));
        for (const id of gone) await view.delete(tx, ownerId, id);
        if (gone.length) await requeue(tx, ownerId, "block", gone);
        return gone.length;
      });
      let reindexed = 0;
      for (let afterSeq = 0; ; ) {
        const { rows, more } = await store.transaction(async (tx) => {
          const batch = await d.documents.listIndexSourcesPage(
            tx,
            ownerId,
            workspaceId,
            afterSeq,
            REBUILD_BATCH,
            REBUILD_BATCH_BYTES,
          );
          const now = new Date().toISOString();
          const fresh = new Set<string>();
          for (const doc of batch.rows) if (await view.put(tx, snapshotOf(doc, now))) fresh.add(doc.id);
          if (batch.rows.length)
            await requeue(
              tx,
              ownerId,
              "block",
              batch.rows.map((doc) => doc.id),
              fresh,
            );
          return batch;
        });
        reindexed += rows.length;
        if (!more) break;
        afterSeq = rows[rows.length - 1].seq;
      }
      for (let threadSeq = 0; ; ) {
        const threads = await d.chats.listThreadsPage(store.db, ownerId, workspaceId, threadSeq, REBUILD_BATCH);
        for (const thread of threads) {
          for (let messageSeq = 0; ; ) {
            const keys = await store.transaction(async (tx) => {
              const page = await d.chats.messageKeysPage(tx, ownerId, thread.id, messageSeq, REBUILD_BATCH);
              if (page.length)
                await requeue(
                  tx,
                  ownerId,
                  "message",
                  page.map((key) => key.id),
                );
              return page;
            });
            if (keys.length < REBUILD_BATCH) break;
            messageSeq = keys[keys.length - 1].seq;
          }
        }
        if (threads.length < REBUILD_BATCH) break;
        threadSeq = threads[threads.length - 1].seq;
      }
      return { reindexed, stale };
    },
  };
}
