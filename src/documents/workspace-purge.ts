import type { Outbox } from "../search";
import type { WorkspaceContents } from "../workspaces/contents";
import type { IndexViewRepository } from "./index-view-repository";
import type { DocumentRepository } from "./repository";

/**
 * A workspace's documents (notes are documents too) and their entries in the index view,
 * for the workspace delete. Every entry that goes has its blocks' index rows removed
 * through the outbox, as a unified delete does.
 */
export function documentWorkspaceContents(
  repo: DocumentRepository,
  view: IndexViewRepository,
  outbox: Outbox,
): WorkspaceContents {
  return {
    name: "documents",
    count: async (tx, ownerId, workspaceId) => ({ documents: await repo.countWorkspace(tx, ownerId, workspaceId) }),
    async purge(tx, ownerId, workspaceId) {
      const documents = await repo.deleteWorkspace(tx, ownerId, workspaceId);
      const indexed = await view.deleteWorkspace(tx, ownerId, workspaceId);
      if (indexed.length)
        await outbox.enqueueMany(
          tx,
          indexed.map((sourceId) => ({ ownerId, kind: "block" as const, sourceId })),
          "sync",
        );
      return { counts: { documents: documents.length } };
    },
  };
}
