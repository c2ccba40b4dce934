import type { Logger } from "../lib/log";
import type { ScheduledTask, Scheduler } from "../lib/scheduler";

/** A WAL another process holds is tried again this much later, until the next round. */
const RETRY_MS = 1_000;

export interface WalTruncateOptions {
  /** The store's `truncateWal` (SQLite only). */
  truncate: () => Promise<boolean>;
  scheduler: Scheduler;
  /** Deleted text leaves the WAL within this long: it is cut every half of it. */
  withinMs: number;
  log: Logger;
}

/**
 * Deleted means gone from the WAL too: `secure_delete` zeroes a deleted row in its page,
 * but the WAL keeps older images of that page until its frames are overwritten, which on
 * an idle server is never. So every half of the bound the WAL is checkpointed into the
 * database file and cut to zero bytes (`SqliteConnection.truncateWal`); while another
 * process holds it, every second until the next round. A round costs a WAL that grows
 * again from nothing (see the `journal_size_limit` note in store.ts): twice a minute, not
 * at every checkpoint.
 */
export function scheduleWalTruncate(o: WalTruncateOptions): ScheduledTask {
  const everyMs = Math.max(1, Math.floor(o.withinMs / 2));
  let warned = false;
  return o.scheduler.every(everyMs, "sqlite wal truncate", async () => {
    const until = Date.now() + everyMs - RETRY_MS;
    while (!(await o.truncate())) {
      if (o.scheduler.stopped || Date.now() >= until) {
        if (!warned)
          o.log.warn(
            "the SQLite WAL could not be cut: another process holds it; deleted text may stay in it until it lets go",
          );
        warned = true;
        return;
      }
      await o.scheduler.pause(RETRY_MS);
    }
    warned = false;
  });
}
