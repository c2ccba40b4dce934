import { all, first, list, run, sql, type Executor } from "../db/store";
import type { Outbox } from "../search";
import type { WorkspaceContents } from "../workspaces/contents";

/**
 * The memories of a workspace, for the workspace delete: the memories themselves, every
 * version of their history (the text of each, so nothing of what they said is left), and
 * their search index rows (through the outbox, as a single delete). Nothing is kept, not
 * even the content-free tombstone a single delete leaves: the whole workspace is gone.
 *
 * This is the one place a workspace's memory data is purged: a table that holds memory text
 * of a workspace (pending proposals, for one) is deleted here as well, in `purgeRows`.
 */
export function memoryWorkspaceContents(outbox: Outbox): WorkspaceContents {
  return {
    name: "memories",
    count: async (tx, ownerId, workspaceId) => ({ memories: await countRows(tx, ownerId, workspaceId) }),
    async purge(tx, ownerId, workspaceId) {
      const { ids, neighbours } = await purgeRows(tx, ownerId, workspaceId);
      // The deleted memories leave the index; memories of the same conversations kept elsewhere
      // had them as context, and are indexed again without it.
      const resync = [...ids, ...neighbours];
      if (resync.length) await outbox.enqueueMany(tx, resync.map((sourceId) => ({ ownerId, kind: "memory" as const, sourceId })), "sync");
      return { counts: { memories: ids.length } };
    },
  };
}

// The queries: kept beside their one caller (rather than in repository.ts) so that the
// memory write module can change on its own; every one is scoped by owner and workspace.

async function countRows(tx: Executor, ownerId: string, workspaceId: string): Promise<number> {
  return Number((await first<{ n: number }>(tx, sql`SELECT COUNT(*) AS n FROM memories WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId}`))?.n ?? 0);
}

/** Deletes the workspace's memories and all their history; the ids of the memories that went, and of those left in their conversations. */
async function purgeRows(tx: Executor, ownerId: string, workspaceId: string): Promise<{ ids: string[]; neighbours: string[] }> {
  const sessions = (await all<{ session_id: string }>(
    tx,
    sql`SELECT DISTINCT session_id FROM memories WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} AND session_id IS NOT NULL`,
  )).map((r) => r.session_id);
  const ids = (await all<{ id: string }>(tx, sql`DELETE FROM memories WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} RETURNING id`)).map((r) => r.id);
  // Versions carry their memory's workspace; those of memories deleted earlier (by extraction,
  // their text kept for review) are found by it, the rest by their memory's id.
  await run(tx, sql`DELETE FROM memory_versions WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId}`);
  for (let i = 0; i < ids.length; i += 500) {
    await run(tx, sql`DELETE FROM memory_versions WHERE owner_id = ${ownerId} AND memory_id IN ${list(ids.slice(i, i + 500))}`);
  }
  // Memory proposals of the workspace (their text is memory text too) are deleted here, once their table exists.
  const neighbours: string[] = [];
  for (let i = 0; i < sessions.length; i += 500) {
    const rows = await all<{ id: string }>(tx, sql`SELECT id FROM memories WHERE owner_id = ${ownerId} AND session_id IN ${list(sessions.slice(i, i + 500))}`);
    neighbours.push(...rows.map((r) => r.id));
  }
  return { ids, neighbours };
}
