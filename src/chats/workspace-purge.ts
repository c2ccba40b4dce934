import type { Executor } from "../db/store";
import type { Outbox } from "../search";
import type { WorkspaceContents } from "../workspaces/contents";
import type { ChatRepository } from "./repository";

/** Queues the index removal of deleted messages: the writer re-reads each, finds none, and drops its rows. */
export async function unindexMessages(
  tx: Executor,
  outbox: Outbox,
  ownerId: string,
  messageIds: string[],
): Promise<void> {
  if (messageIds.length)
    await outbox.enqueueMany(
      tx,
      messageIds.map((sourceId) => ({ ownerId, kind: "message" as const, sourceId })),
      "sync",
    );
}

/** A workspace's chat threads and their messages, for the workspace delete. */
export function chatWorkspaceContents(repo: ChatRepository, outbox: Outbox): WorkspaceContents {
  return {
    name: "chats",
    count: (tx, ownerId, workspaceId) => repo.countWorkspace(tx, ownerId, workspaceId),
    async purge(tx, ownerId, workspaceId) {
      const { threads, messageIds } = await repo.deleteWorkspace(tx, ownerId, workspaceId);
      await unindexMessages(tx, outbox, ownerId, messageIds);
      return { counts: { threads, messages: messageIds.length } };
    },
  };
}
