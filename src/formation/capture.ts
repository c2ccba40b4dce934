import { createHash } from "node:crypto";
import type { ThreadWrites } from "../chats";
import type { CapturedExchange, Capture } from "../completions/service";
import { ConstraintError, StoreFullError, StoreUnavailableError } from "../db/errors";
import type { Store } from "../db/store";
import { newId } from "../lib/ids";
import type { Logger } from "../lib/log";
import type { Scheduler } from "../lib/scheduler";
import type { Outbox } from "../search";
import { AppError, conflict, notFound } from "../shared/app-error";
import type { WorkspaceWrites } from "../workspaces";
import type { CaptureSettingsRepository, FormationJob, FormationJobRepository } from "./jobs-repository";
import { MAX_EXTRACT_MESSAGES, MAX_MESSAGE_CHARS, type FormationJob as PublicJob } from "./model";
import type { FormationService } from "./service";

/** How often the worker looks for due jobs besides being woken by a capture. */
const POLL_MS = 5_000;
/** A claimed job's lease: past it (its replica died), another run takes it over. */
const LEASE_MS = 10 * 60_000;
/** Attempts before a job is marked failed; the waits between them grow 4× from 5 s. */
export const MAX_ATTEMPTS = 5;
const BACKOFF_MS = 5_000;

export interface CaptureDeps {
  store: Store;
  chats: ThreadWrites;
  workspaces: WorkspaceWrites;
  jobs: FormationJobRepository;
  settings: CaptureSettingsRepository;
  outbox: Outbox;
  formation: FormationService;
  scheduler: Scheduler;
  log: Logger;
  /** Reverse-proxy encryption mode without MNEMO_EXTRACTION_IN_PROXY_MODE: capture is off. */
  enabled: boolean;
  /** Whether this replica runs the jobs (the index writer: one replica at a time). */
  isWorker: () => boolean;
  /** Base wait between attempts (tests shorten it). */
  backoffMs?: number;
  /** How long a claim holds a job (default 10 minutes). */
  leaseMs?: number;
}

/** The workspace that holds a user's captured conversations when a completion names none. */
export const conversationsWorkspaceId = (userId: string) =>
  `ws_conv_${createHash("sha256").update(`conversations\u001f${userId}`).digest("hex").slice(0, 24)}`;

class AlreadyDone extends Error {}

/** The conversations workspace's id belongs to someone else: the capture cannot be stored. */
class WorkspaceTaken extends Error {}

/** The workspace the completion named was deleted (or never was the user's) before the capture was written. */
class WorkspaceGone extends Error {}

/**
 * Why a capture's write failed, in our words: what its owner reads on the failed job. Never
 * the engine's text, which can quote the values written.
 */
function captureFailure(error: unknown, threadId: string): string {
  const why =
    error instanceof ConstraintError && error.constraint === "unique"
      ? `the thread id ${threadId} is taken by another thread`
      : error instanceof WorkspaceTaken
        ? "the conversations workspace's id is taken"
        : error instanceof WorkspaceGone
          ? "its workspace no longer exists"
          : error instanceof StoreFullError
            ? "the store's disk was full"
            : error instanceof StoreUnavailableError
              ? "the store of record could not be reached"
              : error instanceof AppError
                ? error.message
                : "internal error";
  return `the conversation could not be stored (${why}); nothing of it was kept`;
}

/** A job as its owner sees it (`GET /v1/memories/extract/jobs`): failing from its first failed attempt. */
export function publicJob(j: FormationJob): PublicJob {
  const retrying = j.status === "pending" && j.lastError !== null;
  return {
    id: j.id,
    status: retrying ? "retrying" : j.status,
    attempts: j.attempts,
    lastError: j.lastError,
    nextAttemptAt: j.status === "pending" ? new Date(j.availableAt).toISOString() : null,
    captured: j.captured,
    retryable: j.captured && (retrying || j.status === "failed"),
    threadId: j.threadId,
    workspaceId: j.workspaceId,
    createdAt: j.createdAt,
    updatedAt: j.updatedAt,
  };
}

/**
 * Capture: a completion asked to remember (`X-Svc-Remember: true`) has its exchange written
 * to a chat thread after the reply went out (on the scheduler, never on the request's path),
 * with an extraction job in the same transaction; the worker runs the jobs on one replica,
 * retries with backoff and marks the last failure. Off unless asked for.
 */
export function createCapture(d: CaptureDeps) {
  const backoffMs = d.backoffMs ?? BACKOFF_MS;
  const leaseMs = d.leaseMs ?? LEASE_MS;
  let running: Promise<number> | null = null;
  /** Captures scheduled or being written. */
  const writing = new Set<Promise<void>>();

  async function write(e: CapturedExchange): Promise<void> {
    const threadWorkspaceId = e.workspaceId ?? conversationsWorkspaceId(e.userId);
    const now = new Date().toISOString();
    const messageIds = await d.store.transaction(async (tx) => {
      if (
        !e.workspaceId &&
        !(await d.workspaces.insertIfAbsent(tx, {
          ownerId: e.userId,
          id: threadWorkspaceId,
          name: "Conversations",
          createdAt: now,
          updatedAt: now,
        }))
      ) {
        if ((await d.workspaces.ownerOf(tx, threadWorkspaceId)) !== e.userId) throw new WorkspaceTaken();
      }
      // Locked, so a delete of the workspace either ran before (nothing is written into it) or waits for this write.
      if (e.workspaceId && !(await d.workspaces.lock(tx, e.userId, e.workspaceId))) throw new WorkspaceGone();
      let thread = await d.chats.lockThread(tx, e.userId, threadWorkspaceId, e.threadId);
      if (!thread) {
        const title = (e.messages[0] ?? "Conversation").replace(/\s+/g, " ").trim().slice(0, 80) || "Conversation";
        // Thread ids are unique per user: one this user took in another workspace fails here, and nothing is captured.
        await d.chats.insertThread(tx, {
          ownerId: e.userId,
          workspaceId: threadWorkspaceId,
          id: e.threadId,
          title,
          metadata: { capturedBy: "completions" },
          messageCount: 0,
          lastMessageId: null,
          createdAt: now,
          updatedAt: now,
        });
        thread = await d.chats.lockThread(tx, e.userId, threadWorkspaceId, e.threadId);
      }
      let parentId = thread?.lastMessageId ?? null;
      const ids: string[] = [];
      const turns = [
        ...e.messages.map((content) => ({ role: "user" as const, content })),
        ...(e.reply.trim() ? [{ role: "assistant" as const, content: e.reply }] : []),
      ];
      for (const turn of turns) {
        const id = newId("msg");
        await d.chats.appendMessage(tx, {
          ownerId: e.userId,
          threadId: e.threadId,
          id,
          parentId,
          role: turn.role,
          content: turn.content,
          encryptedContent: null,
          createdAt: new Date().toISOString(),
        });
        await d.outbox.enqueue(tx, { ownerId: e.userId, kind: "message", sourceId: id }, "insert");
        if (parentId) await d.outbox.enqueue(tx, { ownerId: e.userId, kind: "message", sourceId: parentId }, "sync");
        parentId = id;
        ids.push(id);
      }
      await d.jobs.enqueue(
        tx,
        { ownerId: e.userId, workspaceId: e.workspaceId, threadWorkspaceId, threadId: e.threadId, messageIds: ids },
        Date.now(),
      );
      return ids;
    });
    d.log.debug("conversation captured", { userId: e.userId, messages: messageIds.length });
    wake();
  }

  /**
   * A capture whose write failed becomes a failed job of its owner, in a transaction of its
   * own (the write's rolled back): it keeps the thread id, the workspace and the reason, not
   * the messages, so it cannot be retried. Only if that too fails is a log line all there is.
   */
  async function recordFailure(e: CapturedExchange, error: unknown): Promise<void> {
    const reason = captureFailure(error, e.threadId);
    if (
      !(
        error instanceof ConstraintError ||
        error instanceof WorkspaceTaken ||
        error instanceof WorkspaceGone ||
        error instanceof AppError
      )
    )
      d.log.error("conversation not captured", { userId: e.userId, error: error as Error });
    const subject = {
      ownerId: e.userId,
      workspaceId: e.workspaceId,
      threadWorkspaceId: e.workspaceId ?? conversationsWorkspaceId(e.userId),
      threadId: e.threadId,
    };
    try {
      const id = await d.store.transaction((tx) => d.jobs.recordFailedCapture(tx, subject, reason, Date.now()));
      d.log.warn("conversation not captured; recorded as a failed job", { userId: e.userId, jobId: id, reason });
    } catch (failure) {
      d.log.error("conversation not captured, and its failed job not recorded", {
        userId: e.userId,
        reason,
        error: failure as Error,
      });
    }
  }

  /** One job: its messages read back (owner-scoped), extracted, and marked done in the transaction that applies them. */
  async function runJob(job: FormationJob): Promise<void> {
    try {
      const found = await d.chats.getMessages(d.store.db, job.ownerId, job.messageIds);
      const messages = job.messageIds
        .flatMap((id) => {
          const m = found.get(id);
          // Encrypted messages hold '' as content and are skipped by extraction too.
          // Within the bounds of a request to POST /v1/memories/extract: the latest messages, each cut to its length.
          return m && m.threadId === job.threadId
            ? [{ role: m.role, content: m.content.slice(0, MAX_MESSAGE_CHARS), id: m.id }]
            : [];
        })
        .slice(-MAX_EXTRACT_MESSAGES);
      if (messages.length) {
        await d.formation.extract({
          userId: job.ownerId,
          body: { messages, ...(job.workspaceId ? { workspaceId: job.workspaceId } : {}) },
          dryRun: false,
          automatic: true,
          source: { threadId: job.threadId, messageIds: job.messageIds },
          inTransaction: async (tx) => {
            if (!(await d.jobs.finish(tx, job.seq))) throw new AlreadyDone();
          },
        });
      }
      await d.store.transaction((tx) => d.jobs.finish(tx, job.seq));
    } catch (error) {
      if (error instanceof AlreadyDone) return;
      const failed = job.attempts >= MAX_ATTEMPTS;
      // Our own error messages only: an upstream's text never gets here (completions/upstream.ts).
      const message = error instanceof AppError ? error.message : "internal error";
      if (!(error instanceof AppError))
        d.log.error("memory extraction job failed", { userId: job.ownerId, error: error as Error });
      await d.store.transaction((tx) =>
        d.jobs.retryOrFail(tx, job.seq, {
          failed,
          availableAt: Date.now() + backoffMs * 4 ** (job.attempts - 1),
          error: message,
        }),
      );
      d.log.warn(failed ? "memory extraction job failed for good" : "memory extraction job failed; retried later", {
        userId: job.ownerId,
        attempts: job.attempts,
        reason: message,
      });
    }
  }

  /** Runs every due job, one at a time; how many ran. */
  function runDue(): Promise<number> {
    if (!d.isWorker() || d.scheduler.stopped) return Promise.resolve(0);
    running ??= (async () => {
      let ran = 0;
      try {
        if (!(await d.jobs.anyDue(d.store.db, Date.now()))) return 0;
        for (
          let job = await d.store.transaction((tx) => d.jobs.claim(tx, Date.now(), leaseMs));
          job;
          job = d.scheduler.stopped ? null : await d.store.transaction((tx) => d.jobs.claim(tx, Date.now(), leaseMs))
        ) {
          await runJob(job);
          ran++;
        }
      } finally {
        running = null;
      }
      return ran;
    })();
    return running;
  }

  function wake() {
    d.scheduler.after(0, "formation jobs", runDue);
  }

  const capture = {
    enabled: d.enabled,
    /** The user's default for a completion that says nothing (PUT /v1/me/capture); off unless set. */
    rememberByDefault: (userId: string) =>
      d.enabled ? d.settings.remember(d.store.db, userId) : Promise.resolve(false),
    /** `GET /v1/me/capture`. */
    async settings(userId: string) {
      return { remember: await d.settings.remember(d.store.db, userId), available: d.enabled };
    },
    /** `PUT /v1/me/capture`. */
    async setSettings(userId: string, remember: boolean) {
      await d.settings.setRemember(d.store.db, userId, remember);
      return { remember, available: d.enabled };
    },
    record(exchange: CapturedExchange) {
      let done!: () => void;
      const settled = new Promise<void>((resolve) => (done = resolve));
      writing.add(settled);
      settled.then(() => writing.delete(settled));
      const task = d.scheduler.after(0, "capture", () =>
        write(exchange)
          .catch((error) => recordFailure(exchange, error))
          .finally(done),
      );
      // Not scheduled (the server is stopping): nothing will be written.
      if (d.scheduler.stopped) done();
      void task;
    },
    /** Resolves once every capture recorded so far is written (or refused). */
    async idle() {
      while (writing.size) await Promise.all([...writing]);
    },
    start() {
      d.scheduler.every(POLL_MS, "formation jobs", runDue, 0);
    },
    runDue,
    /** `GET /v1/memories/extract/jobs`: the user's latest jobs, newest first. */
    async jobs(userId: string) {
      return { data: (await d.jobs.listByOwner(d.store.db, userId, 100)).map(publicJob) };
    },
    /**
     * `POST /v1/memories/extract/jobs/:id/retry`: a failed job, or one waiting to retry, is due
     * again now with its attempts reset (the gateway was fixed). Another user's job is a 404.
     */
    async retry(userId: string, id: string): Promise<PublicJob> {
      const requeued = await d.store.transaction(async (tx) => {
        const job = await d.jobs.byId(tx, userId, id);
        if (!job) throw notFound(`id: no extraction job ${id}`);
        if (!job.captured)
          throw conflict(
            `id: job ${id} cannot be retried: its conversation could not be stored, so there is nothing to extract from`,
          );
        const again = await d.jobs.requeue(tx, job.seq, Date.now());
        if (!again)
          throw conflict(`id: job ${id} is ${job.status}; only a failed job, or one waiting to retry, can be retried`);
        return again;
      });
      wake();
      return publicJob(requeued);
    },
    /** Jobs by status over every user (`/health` details). */
    counts: (ownerId?: string) => d.jobs.counts(d.store.db, ownerId),
  };
  return capture satisfies Capture;
}
export type CaptureService = ReturnType<typeof createCapture>;
