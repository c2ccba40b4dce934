import type { Executor } from "../db/store";

/** What a workspace holds, by kind: the counts a delete confirmation shows and a delete reports. */
export interface ContentCounts {
  documents: number;
  threads: number;
  messages: number;
  files: number;
  memories: number;
  /** Extraction jobs of its conversations, or of memories meant for it. */
  jobs: number;
}
export const EMPTY_COUNTS: ContentCounts = { documents: 0, threads: 0, messages: 0, files: 0, memories: 0, jobs: 0 };

/**
 * One domain's part of a workspace. Each domain owns its tables, so each gives the
 * workspaces service its own way to count and to purge what it keeps of a workspace;
 * the workspaces service only orchestrates them, in one transaction.
 */
export interface WorkspaceContents {
  /** Which domain this is (log lines). */
  name: string;
  count(tx: Executor, ownerId: string, workspaceId: string): Promise<Partial<ContentCounts>>;
  /**
   * Deletes the domain's rows of the workspace inside `tx` and queues the removal of their
   * search index rows in the same transaction. What cannot be undone (bytes outside the
   * store of record) is returned as a task, run only once the transaction committed.
   */
  purge(
    tx: Executor,
    ownerId: string,
    workspaceId: string,
  ): Promise<{ counts: Partial<ContentCounts>; afterCommit?: () => Promise<void> }>;
}

/** Adds `part` into `total`, key by key. */
export function addCounts(total: ContentCounts, part: Partial<ContentCounts>): ContentCounts {
  for (const [key, value] of Object.entries(part) as Array<[keyof ContentCounts, number]>) total[key] += value;
  return total;
}
