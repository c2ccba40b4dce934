import type { Settings } from "../../db/leases";
import type { Executor } from "../../db/store";
import type { Scheduler } from "../../lib/scheduler";
import type { IndexOutbox } from "./outbox-repository";

/** What a search learnt waiting for the index: `lag` rows of the owner not yet indexed at its deadline. */
export interface FlushResult {
  lag: number;
}

interface Waiter {
  ownerId: string;
  /** The kinds searched (undefined: all): rows of other kinds are not waited for. */
  kinds?: readonly string[];
  /** The owner's highest pending text row at the call, or null. */
  seq: number | null;
  /** A rebuild queued before the call, which re-enqueues everything: waited for too. */
  rebuildSeq: number | null;
  done: (result: FlushResult) => void;
}

/** Settings key where a reader replica says that one of its searches waits for the writer. */
const WANTED_KEY = "index_wanted_at";
const WANTED_FOR_MS = 1_000;

/** Owners whose rows one priority batch takes at most (a bounded IN list). */
const MAX_PRIORITY_OWNERS = 64;

/** How often a process that does not write the index looks whether the writer got there. */
const READER_POLL_MS = 20;

/**
 * Searches waiting for their owner's own acknowledged writes to reach the index, each
 * with a deadline. In the writer they are released as batches land (and their owners'
 * rows go first); elsewhere they poll the outbox in the store of record. Deadlines and
 * polls run on the index writer's part of the scheduler: once it is stopped (shutdown),
 * a search answers from the index as it is, at once.
 */
export function createWaiters(o: {
  outbox: IndexOutbox;
  settings: Settings;
  db: Executor;
  scheduler: Scheduler;
  isWriter: () => boolean;
  onWait: () => void;
}) {
  let waiters: Waiter[] = [];

  async function isDone(w: Waiter): Promise<boolean> {
    if (w.rebuildSeq !== null && (await o.outbox.ownerHasTextUpTo("*", w.rebuildSeq))) return false;
    return w.seq === null || !(await o.outbox.ownerHasTextUpTo(w.ownerId, w.seq, w.kinds));
  }

  return {
    get any(): boolean {
      return waiters.length > 0;
    },

    async wait(ownerId: string, waitMs: number, kinds?: readonly string[]): Promise<FlushResult> {
      const { own: seq, rebuild: rebuildSeq } = await o.outbox.pendingForSearch(ownerId, kinds);
      if (seq === null && rebuildSeq === null) return { lag: 0 };
      const lagNow = async () => ({ lag: await o.outbox.pendingTextCount(ownerId, kinds) });
      if (waitMs <= 0 || o.scheduler.stopped) return lagNow();
      const deadline = Date.now() + waitMs;
      if (!o.isWriter()) {
        // Tell the writer (another process) that a search waits: it stops gathering a batch.
        await o.settings.set(o.db, WANTED_KEY, String(Date.now()));
        const waiter: Waiter = { ownerId, kinds, seq, rebuildSeq, done: () => {} };
        while (Date.now() < deadline && !o.scheduler.stopped) {
          await o.scheduler.pause(Math.min(READER_POLL_MS, Math.max(1, deadline - Date.now())));
          if (await isDone(waiter)) return { lag: 0 };
        }
        return lagNow();
      }
      return new Promise<FlushResult>((resolve) => {
        let settled = false;
        const waiter: Waiter = {
          ownerId,
          kinds,
          seq,
          rebuildSeq,
          done: (result) => {
            if (settled) return;
            settled = true;
            timer.cancel();
            waiters = waiters.filter((w) => w !== waiter);
            resolve(result);
          },
        };
        const timer = o.scheduler.after(waitMs, "search wait deadline", () =>
          lagNow().then(waiter.done, () => waiter.done({ lag: 1 })),
        );
        waiters.push(waiter);
        o.onWait();
      });
    },

    /** Whether a search on another process waited for rows within the last second. */
    async wantedElsewhere(): Promise<boolean> {
      const at = Number(await o.settings.get(o.db, WANTED_KEY));
      return Number.isFinite(at) && Date.now() - at < WANTED_FOR_MS;
    },

    /**
     * The owners whose rows the writer takes next: every waiting owner's at once (their
     * tables commit side by side, so eight users' searches wait for one round, not eight),
     * or ['*'] while a search waits for a queued rebuild. Owners without a waiting search
     * (a bulk import) wait for their turn.
     */
    priorityOwners(): string[] | null {
      if (!waiters.length) return null;
      if (waiters.some((w) => w.rebuildSeq !== null)) return ["*"];
      return [...new Set(waiters.map((w) => w.ownerId))].slice(0, MAX_PRIORITY_OWNERS);
    },

    /** Releases the waiters whose rows are all indexed. */
    async release(): Promise<void> {
      for (const waiter of [...waiters]) if (await isDone(waiter)) waiter.done({ lag: 0 });
    },

    /** A rebuild re-enqueued every source: waiters now wait for their owner's new rows. */
    async afterRebuild(): Promise<void> {
      for (const waiter of waiters) {
        waiter.rebuildSeq = null;
        waiter.seq = (await o.outbox.pendingForSearch(waiter.ownerId, waiter.kinds)).own;
      }
    },

    /** Shutdown: every waiter answers from the index as it is. */
    releaseAll(): void {
      for (const waiter of [...waiters]) waiter.done({ lag: 0 });
    },
  };
}

export type Waiters = ReturnType<typeof createWaiters>;
