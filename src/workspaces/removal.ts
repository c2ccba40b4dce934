import type { Store } from "../db/store";
import type { Logger } from "../lib/log";
import { notFound } from "../shared/app-error";
import { addCounts, EMPTY_COUNTS, type ContentCounts, type WorkspaceContents } from "./contents";
import type { ArtifactRepository, WorkspaceRepository } from "./repository";

/**
 * Deleting a workspace with everything it holds. Each domain purges its own tables
 * (`contents`, wired by the composition root); this only orchestrates them, all in one
 * transaction with the workspace row and its artifacts: the workspace and its content are
 * there whole, or gone whole, and so are their search index rows, whose removal is queued
 * in the outbox of that transaction (a search reads deleted sources as gone at once). Bytes
 * outside the store of record (file blobs) are removed once it committed.
 */
export function createWorkspaceRemoval(d: {
  store: Store;
  repo: WorkspaceRepository;
  artifacts: ArtifactRepository;
  contents: WorkspaceContents[];
  log: Logger;
}) {
  return {
    /** What the workspace holds, by kind (a delete's confirmation says what goes). */
    async contents(ownerId: string, workspaceId: string): Promise<ContentCounts & { workspaceId: string }> {
      // Plain reads, no transaction: a count for a confirmation takes no write lock.
      if (!(await d.repo.get(d.store.db, ownerId, workspaceId))) throw notFound(`workspace '${workspaceId}' not found`);
      const total = { ...EMPTY_COUNTS };
      for (const part of d.contents) addCounts(total, await part.count(d.store.db, ownerId, workspaceId));
      return { workspaceId, ...total };
    },

    async remove(ownerId: string, workspaceId: string): Promise<{ id: string; deleted: true; removed: ContentCounts }> {
      const afterCommit: Array<() => Promise<void>> = [];
      const removed = await d.store.transaction(async (tx) => {
        if (!(await d.repo.lock(tx, ownerId, workspaceId))) throw notFound(`workspace '${workspaceId}' not found`);
        const total = { ...EMPTY_COUNTS };
        for (const part of d.contents) {
          const purged = await part.purge(tx, ownerId, workspaceId);
          addCounts(total, purged.counts);
          if (purged.afterCommit) afterCommit.push(purged.afterCommit);
        }
        await d.artifacts.deleteWorkspace(tx, ownerId, workspaceId);
        await d.repo.delete(tx, ownerId, workspaceId);
        return total;
      });
      for (const task of afterCommit) await task();
      d.log.info("workspace deleted", { userId: ownerId, workspaceId, ...removed });
      return { id: workspaceId, deleted: true, removed };
    },
  };
}
export type WorkspaceRemoval = ReturnType<typeof createWorkspaceRemoval>;
