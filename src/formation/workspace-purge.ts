import type { Executor } from "../db/store";
import type { WorkspaceContents } from "../workspaces/contents";
import { workspaceJobs } from "./jobs-repository";

/**
 * Extraction jobs of deleted conversations. A job deleted while it runs cannot apply its
 * decisions: its run marks it done in the transaction that applies them, finds no job to
 * mark (capture.ts), and that transaction rolls back.
 */

/** The jobs of one thread, in the transaction that deletes it; how many went. */
export function purgeThreadJobs(tx: Executor, ownerId: string, workspaceId: string, threadId: string): Promise<number> {
  return workspaceJobs.deleteOfThread(tx, ownerId, workspaceId, threadId);
}

/** For the workspace delete: the jobs of its threads, and those whose memories were meant for it. */
export const jobWorkspaceContents: WorkspaceContents = {
  name: "extraction jobs",
  count: async (tx, ownerId, workspaceId) => ({
    jobs: await workspaceJobs.count(tx, ownerId, workspaceId),
  }),
  purge: async (tx, ownerId, workspaceId) => ({
    counts: { jobs: await workspaceJobs.delete(tx, ownerId, workspaceId) },
  }),
};
