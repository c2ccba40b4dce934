import { all, sql, type Executor } from "../db/store";

/** A memory as an operator's check over every user reads it. */
export interface ScannedMemory {
  seq: number;
  ownerId: string;
  id: string;
  workspaceId: string | null;
  content: string;
}

/**
 * Reads across every user, for operators' checks (`mnemo doctor`): kept apart from the
 * memory repository, whose every query is scoped by owner.
 */
export function createMemoryScanRepository() {
  return {
    /** Up to `limit` memories after position `after`, in insertion order: a page of a scan that holds no long transaction. */
    async page(tx: Executor, after: number, limit: number): Promise<ScannedMemory[]> {
      const rows = await all<{
        seq: number;
        owner_id: string;
        id: string;
        workspace_id: string | null;
        content: string;
      }>(
        tx,
        sql`SELECT seq, owner_id, id, workspace_id, content FROM memories WHERE seq > ${after} ORDER BY seq LIMIT ${limit}`,
      );
      return rows.map((r) => ({
        seq: Number(r.seq),
        ownerId: r.owner_id,
        id: r.id,
        workspaceId: r.workspace_id,
        content: r.content,
      }));
    },
  };
}
