import { first, run, sql, type Executor } from "../db/store";
import type { WorkspaceContents } from "../workspaces/contents";

/**
 * Extraction jobs of deleted conversations. A job deleted while it runs cannot apply its
 * decisions: its run marks it done in the transaction that applies them, finds no job to
 * mark (capture.ts), and that transaction rolls back.
 */
const ofWorkspace = (ownerId: string, workspaceId: string) =>
  sql`owner_id = ${ownerId} AND (thread_workspace_id = ${workspaceId} OR workspace_id = ${workspaceId})`;

/** The jobs of one thread, in the transaction that deletes it; how many went. */
export function purgeThreadJobs(tx: Executor, ownerId: string, workspaceId: string, threadId: string): Promise<number> {
  return run(tx, sql`DELETE FROM formation_jobs WHERE owner_id = ${ownerId} AND thread_workspace_id = ${workspaceId} AND thread_id = ${threadId}`);
}

/** For the workspace delete: the jobs of its threads, and those whose memories were meant for it. */
export const jobWorkspaceContents: WorkspaceContents = {
  name: "extraction jobs",
  count: async (tx, ownerId, workspaceId) => ({
    jobs: Number((await first<{ n: number }>(tx, sql`SELECT COUNT(*) AS n FROM formation_jobs WHERE ${ofWorkspace(ownerId, workspaceId)}`))?.n ?? 0),
  }),
  purge: async (tx, ownerId, workspaceId) => ({ counts: { jobs: await run(tx, sql`DELETE FROM formation_jobs WHERE ${ofWorkspace(ownerId, workspaceId)}`) } }),
};
