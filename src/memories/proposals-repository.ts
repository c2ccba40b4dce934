import { all, first, run, sql, type Executor } from "../db/store";

export type ProposalAction = "update" | "delete";
export type ProposalStatus = "pending" | "accepted" | "rejected";

export interface ProposalRow {
  seq: number;
  ownerId: string;
  id: string;
  memoryId: string;
  workspaceId: string | null;
  action: ProposalAction;
  /** update: the proposed text; delete: null. */
  content: string | null;
  /** The memory's `updatedAt` when it was proposed: a memory changed since is not changed by accepting. */
  memoryUpdatedAt: string;
  threadId: string | null;
  messageIds: string[];
  model: string | null;
  createdAt: string;
  status: ProposalStatus;
  decidedAt: string | null;
}

type Stored = {
  seq: number;
  owner_id: string;
  id: string;
  memory_id: string;
  workspace_id: string | null;
  action: ProposalAction;
  content: string | null;
  memory_updated_at: string;
  thread_id: string | null;
  message_ids: string;
  model: string | null;
  created_at: string;
  status: ProposalStatus;
  decided_at: string | null;
};
const toRow = (r: Stored): ProposalRow => ({
  seq: Number(r.seq),
  ownerId: r.owner_id,
  id: r.id,
  memoryId: r.memory_id,
  workspaceId: r.workspace_id,
  action: r.action,
  content: r.content,
  memoryUpdatedAt: r.memory_updated_at,
  threadId: r.thread_id,
  messageIds: JSON.parse(r.message_ids),
  model: r.model,
  createdAt: r.created_at,
  status: r.status,
  decidedAt: r.decided_at,
});

/**
 * Changes automatic memory formation proposed to memories a person wrote, kept for that
 * person to accept or reject. Every query is scoped by owner.
 */
export function createMemoryProposalRepository() {
  return {
    async insert(tx: Executor, p: Omit<ProposalRow, "seq" | "status" | "decidedAt">): Promise<void> {
      await run(
        tx,
        sql`INSERT INTO memory_proposals (owner_id, id, memory_id, workspace_id, action, content, memory_updated_at, thread_id, message_ids, model, created_at, status)
            VALUES (${p.ownerId}, ${p.id}, ${p.memoryId}, ${p.workspaceId}, ${p.action}, ${p.content}, ${p.memoryUpdatedAt}, ${p.threadId},
                    ${JSON.stringify(p.messageIds)}, ${p.model}, ${p.createdAt}, 'pending')`,
      );
    },
    async get(tx: Executor, ownerId: string, id: string): Promise<ProposalRow | null> {
      const r = await first<Stored>(tx, sql`SELECT * FROM memory_proposals WHERE owner_id = ${ownerId} AND id = ${id}`);
      return r ? toRow(r) : null;
    },
    /** Pending ones, oldest first, after `afterSeq`. */
    async pendingPage(tx: Executor, ownerId: string, afterSeq: number, limit: number): Promise<ProposalRow[]> {
      const rows = await all<Stored>(
        tx,
        sql`SELECT * FROM memory_proposals WHERE owner_id = ${ownerId} AND status = 'pending' AND seq > ${afterSeq} ORDER BY seq LIMIT ${limit}`,
      );
      return rows.map(toRow);
    },
    /** Marks a pending proposal decided; false when it was not pending (decided meanwhile). */
    async decide(
      tx: Executor,
      ownerId: string,
      id: string,
      status: "accepted" | "rejected",
      at: string,
    ): Promise<boolean> {
      return (
        (await run(
          tx,
          sql`UPDATE memory_proposals SET status = ${status}, decided_at = ${at} WHERE owner_id = ${ownerId} AND id = ${id} AND status = 'pending'`,
        )) > 0
      );
    },
    /** Drops every proposal about a memory (its person erased it: nothing of it is kept). */
    async dropFor(tx: Executor, ownerId: string, memoryId: string): Promise<void> {
      await run(tx, sql`DELETE FROM memory_proposals WHERE owner_id = ${ownerId} AND memory_id = ${memoryId}`);
    },
    /** Drops every proposal about a workspace's memories (the workspace is deleted). */
    async dropForWorkspace(tx: Executor, ownerId: string, workspaceId: string): Promise<void> {
      await run(tx, sql`DELETE FROM memory_proposals WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId}`);
    },
  };
}
export type MemoryProposalRepository = ReturnType<typeof createMemoryProposalRepository>;
