import { all, first, run, sql, type Executor } from "../db/store";
import { newId } from "../lib/ids";

export interface FormationJob {
  /** Internal order of claims; never shown (it would count the server's jobs). */
  seq: number;
  /** `job_…`: how its owner names it. */
  id: string;
  ownerId: string;
  /** The workspace memories go to (X-Svc-Workspace), or null: personal memories. */
  workspaceId: string | null;
  /** Where the captured thread lives. */
  threadWorkspaceId: string;
  threadId: string;
  messageIds: string[];
  status: "pending" | "running" | "done" | "failed";
  attempts: number;
  lastError: string | null;
  /** When a pending job is due (ms since the epoch). */
  availableAt: number;
  /** False: the capture's write failed, nothing of the exchange was stored (no retry possible). */
  captured: boolean;
  createdAt: string;
  updatedAt: string;
}

type Stored = {
  seq: number;
  id: string;
  captured: number;
  available_at: number;
  owner_id: string;
  workspace_id: string | null;
  thread_workspace_id: string;
  thread_id: string;
  message_ids: string;
  status: FormationJob["status"];
  attempts: number;
  last_error: string | null;
  created_at: string;
  updated_at: string;
};
const toJob = (r: Stored): FormationJob => ({
  seq: Number(r.seq),
  id: r.id,
  ownerId: r.owner_id,
  workspaceId: r.workspace_id,
  threadWorkspaceId: r.thread_workspace_id,
  threadId: r.thread_id,
  messageIds: JSON.parse(r.message_ids),
  status: r.status,
  attempts: Number(r.attempts),
  lastError: r.last_error,
  availableAt: Number(r.available_at),
  captured: Number(r.captured) === 1,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** What a job is about: whose exchange, and where its thread and memories go. */
export interface JobSubject {
  ownerId: string;
  workspaceId: string | null;
  threadWorkspaceId: string;
  threadId: string;
}

/** The extraction job table (formation/migrations.ts). */
export function createFormationJobRepository() {
  return {
    /** A job for a captured exchange, due at once; its id. */
    async enqueue(tx: Executor, job: JobSubject & { messageIds: string[] }, nowMs: number): Promise<string> {
      const id = newId("job");
      const now = new Date(nowMs).toISOString();
      await run(
        tx,
        sql`INSERT INTO formation_jobs (id, owner_id, workspace_id, thread_workspace_id, thread_id, message_ids, status, attempts, available_at, lease_until, created_at, updated_at)
            VALUES (${id}, ${job.ownerId}, ${job.workspaceId}, ${job.threadWorkspaceId}, ${job.threadId}, ${JSON.stringify(job.messageIds)}, 'pending', 0, ${nowMs}, 0, ${now}, ${now})`,
      );
      return id;
    },
    /**
     * A capture whose write failed, recorded as a failed job so that its owner sees it: where
     * it was going and why it failed, never the exchange's text (which was not stored).
     */
    async recordFailedCapture(tx: Executor, job: JobSubject, error: string, nowMs: number): Promise<string> {
      const id = newId("job");
      const now = new Date(nowMs).toISOString();
      await run(
        tx,
        sql`INSERT INTO formation_jobs (id, captured, owner_id, workspace_id, thread_workspace_id, thread_id, message_ids, status, attempts, available_at, lease_until, last_error, created_at, updated_at)
            VALUES (${id}, 0, ${job.ownerId}, ${job.workspaceId}, ${job.threadWorkspaceId}, ${job.threadId}, '[]', 'failed', 0, ${nowMs}, 0, ${error.slice(0, 500)}, ${now}, ${now})`,
      );
      return id;
    },
    async byId(tx: Executor, ownerId: string, id: string): Promise<FormationJob | null> {
      const r = await first<Stored>(tx, sql`SELECT * FROM formation_jobs WHERE owner_id = ${ownerId} AND id = ${id}`);
      return r ? toJob(r) : null;
    },
    /**
     * A failed job, or a pending one whose last attempt failed, due again now with its attempts
     * reset; null when it is in neither state any more (it ran meanwhile).
     */
    async requeue(tx: Executor, seq: number, nowMs: number): Promise<FormationJob | null> {
      const r = await first<Stored>(
        tx,
        sql`UPDATE formation_jobs SET status = 'pending', attempts = 0, available_at = ${nowMs}, lease_until = 0, last_error = NULL, updated_at = ${new Date(nowMs).toISOString()}
            WHERE seq = ${seq} AND captured = 1 AND (status = 'failed' OR (status = 'pending' AND last_error IS NOT NULL)) RETURNING *`,
      );
      return r ? toJob(r) : null;
    },
    /** Whether any job is due (a plain read: an idle poll takes no write lock). */
    async anyDue(tx: Executor, nowMs: number): Promise<boolean> {
      return (
        (await first(
          tx,
          sql`SELECT 1 AS one FROM formation_jobs WHERE (status = 'pending' AND available_at <= ${nowMs}) OR (status = 'running' AND lease_until < ${nowMs}) LIMIT 1`,
        )) !== null
      );
    },
    /**
     * Claims the oldest due job: pending and available, or running with its lease lapsed (its
     * replica died mid-job). The claim is one conditional UPDATE: two claimers cannot both win.
     */
    async claim(tx: Executor, nowMs: number, leaseMs: number): Promise<FormationJob | null> {
      const due = await first<{ seq: number }>(
        tx,
        sql`SELECT seq FROM formation_jobs WHERE (status = 'pending' AND available_at <= ${nowMs}) OR (status = 'running' AND lease_until < ${nowMs}) ORDER BY seq LIMIT 1`,
      );
      if (!due) return null;
      const r = await first<Stored>(
        tx,
        sql`UPDATE formation_jobs SET status = 'running', attempts = attempts + 1, lease_until = ${nowMs + leaseMs}, updated_at = ${new Date(nowMs).toISOString()}
            WHERE seq = ${due.seq} AND ((status = 'pending' AND available_at <= ${nowMs}) OR (status = 'running' AND lease_until < ${nowMs})) RETURNING *`,
      );
      return r ? toJob(r) : null;
    },
    /** Done, in the transaction that applied its decisions; false when it was done already (a second run). */
    async finish(tx: Executor, seq: number): Promise<boolean> {
      return (
        (await run(
          tx,
          sql`UPDATE formation_jobs SET status = 'done', last_error = NULL, updated_at = ${new Date().toISOString()} WHERE seq = ${seq} AND status <> 'done'`,
        )) > 0
      );
    },
    async isDone(tx: Executor, seq: number): Promise<boolean> {
      return (
        (await first<{ status: string }>(tx, sql`SELECT status FROM formation_jobs WHERE seq = ${seq}`))?.status ===
        "done"
      );
    },
    /** Back to pending, due at `availableAt`; or failed for good. */
    async retryOrFail(
      tx: Executor,
      seq: number,
      outcome: { failed: boolean; availableAt: number; error: string },
    ): Promise<void> {
      await run(
        tx,
        sql`UPDATE formation_jobs SET status = ${outcome.failed ? "failed" : "pending"}, available_at = ${outcome.availableAt}, lease_until = 0,
            last_error = ${outcome.error.slice(0, 500)}, updated_at = ${new Date().toISOString()} WHERE seq = ${seq} AND status = 'running'`,
      );
    },
    /** The messages of a thread that some job of the user already covers, whatever its status (`mnemo import --extract` queues the rest). */
    async coveredMessageIds(tx: Executor, ownerId: string, threadId: string): Promise<Set<string>> {
      const rows = await all<{ message_ids: string }>(
        tx,
        sql`SELECT message_ids FROM formation_jobs WHERE owner_id = ${ownerId} AND thread_id = ${threadId}`,
      );
      return new Set(rows.flatMap((r) => JSON.parse(r.message_ids) as string[]));
    },
    /** A user's jobs, newest first (the app, `mnemo doctor`). */
    async listByOwner(tx: Executor, ownerId: string, limit = 100): Promise<FormationJob[]> {
      return (
        await all<Stored>(
          tx,
          sql`SELECT * FROM formation_jobs WHERE owner_id = ${ownerId} ORDER BY seq DESC LIMIT ${limit}`,
        )
      ).map(toJob);
    },
    /** Jobs by status, over every user or one owner's (`/health`: the operator's or a user's; `mnemo doctor`); `retrying`: the pending ones whose last attempt failed. */
    async counts(tx: Executor, ownerId?: string): Promise<Record<string, number>> {
      const owner = ownerId === undefined ? sql`` : sql`WHERE owner_id = ${ownerId}`;
      const rows = await all<{ status: string; failing: number; n: number }>(
        tx,
        sql`SELECT status, CASE WHEN last_error IS NULL THEN 0 ELSE 1 END AS failing, COUNT(*) AS n FROM formation_jobs ${owner} GROUP BY status, CASE WHEN last_error IS NULL THEN 0 ELSE 1 END`,
      );
      const counts: Record<string, number> = {};
      for (const r of rows) {
        counts[r.status] = (counts[r.status] ?? 0) + Number(r.n);
        if (r.status === "pending" && Number(r.failing) === 1) counts.retrying = (counts.retrying ?? 0) + Number(r.n);
      }
      return counts;
    },
    /** The last error of the most recently failing or failed job, over every user (`mnemo doctor`'s hint). */
    async latestError(tx: Executor): Promise<string | null> {
      const r = await first<{ last_error: string }>(
        tx,
        sql`SELECT last_error FROM formation_jobs WHERE last_error IS NOT NULL AND status IN ('pending', 'failed') ORDER BY updated_at DESC, seq DESC LIMIT 1`,
      );
      return r?.last_error ?? null;
    },
  };
}
export type FormationJobRepository = ReturnType<typeof createFormationJobRepository>;

/** Each user's capture default (formation/migrations.ts); none stored: off. */
export function createCaptureSettingsRepository() {
  return {
    async remember(tx: Executor, ownerId: string): Promise<boolean> {
      return (
        Number(
          (
            await first<{ remember: number }>(
              tx,
              sql`SELECT remember FROM capture_settings WHERE owner_id = ${ownerId}`,
            )
          )?.remember ?? 0,
        ) === 1
      );
    },
    async setRemember(tx: Executor, ownerId: string, remember: boolean): Promise<void> {
      await run(
        tx,
        sql`INSERT INTO capture_settings (owner_id, remember, updated_at) VALUES (${ownerId}, ${remember ? 1 : 0}, ${new Date().toISOString()})
            ON CONFLICT (owner_id) DO UPDATE SET remember = excluded.remember, updated_at = excluded.updated_at`,
      );
    },
  };
}
export type CaptureSettingsRepository = ReturnType<typeof createCaptureSettingsRepository>;

/** A workspace's jobs: those of its threads, and those whose memories were meant for it. */
const ofWorkspace = (ownerId: string, workspaceId: string) =>
  sql`owner_id = ${ownerId} AND (thread_workspace_id = ${workspaceId} OR workspace_id = ${workspaceId})`;

/** Jobs as a workspace or thread delete removes them. */
export const workspaceJobs = {
  async deleteOfThread(tx: Executor, ownerId: string, workspaceId: string, threadId: string): Promise<number> {
    return run(
      tx,
      sql`DELETE FROM formation_jobs WHERE owner_id = ${ownerId} AND thread_workspace_id = ${workspaceId} AND thread_id = ${threadId}`,
    );
  },
  async count(tx: Executor, ownerId: string, workspaceId: string): Promise<number> {
    return Number(
      (
        await first<{ n: number }>(
          tx,
          sql`SELECT COUNT(*) AS n FROM formation_jobs WHERE ${ofWorkspace(ownerId, workspaceId)}`,
        )
      )?.n ?? 0,
    );
  },
  async delete(tx: Executor, ownerId: string, workspaceId: string): Promise<number> {
    return run(tx, sql`DELETE FROM formation_jobs WHERE ${ofWorkspace(ownerId, workspaceId)}`);
  },
};
