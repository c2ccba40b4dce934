import type { Lease } from "../../db/leases";
import type { Logger } from "../../lib/log";
import { type JobRunner, RunnerClosed } from "./job-runner";

/** How often the lease is renewed (or sought). */
export const LEASE_POLL_MS = 1_000;
/** A dead writer's lease is taken over after this long: well within 10 s of its death. */
export const LEASE_TTL_MS = 6_000;

/**
 * The index writer's term: the `indexer` lease sought (or renewed) at every tick. Gaining
 * it runs the takeover on the runner, in turn with every LanceDB write; losing it, or
 * failing to renew it, stops the writing at once, since another replica may take over once
 * it expires.
 */
export class WriterTerm {
  /** Whether this term has taken over (what the writer knew before it is forgotten then). */
  tookOver = false;

  constructor(
    private readonly d: {
      lease: Lease;
      /** A replica that only serves never takes the lease. */
      neverWrite?: boolean;
      log: Logger;
      runner: JobRunner;
      stopping: () => boolean;
      /** Becoming the writer: run on the runner before anything is written. */
      takeOver: () => Promise<void>;
      /** Once taken over: what starts the writing. */
      begin: () => void;
      /** Not the writer (or no longer): a reader follows the writer. */
      reading: () => Promise<void>;
    },
  ) {}

  async tick(): Promise<void> {
    const { lease, log } = this.d;
    if (this.d.stopping()) return;
    const wasHeld = lease.held;
    let held = false;
    try {
      if (!this.d.neverWrite) held = await lease.tryAcquire();
    } catch (error) {
      // Unrenewable: another replica may take over once it expires, so stop writing now.
      lease.forget();
      held = false;
      log.warn("cannot reach the store of record to renew the index lease", { reason: (error as Error).message });
    }
    if (!held) {
      this.tookOver = false;
      if (wasHeld) log.warn("index writer lease lost; this process stops writing the index");
      await this.d.reading();
      return;
    }
    if (wasHeld) return;
    try {
      await this.d.runner.run(this.d.takeOver);
      this.tookOver = true;
    } catch (error) {
      if (error instanceof RunnerClosed) return;
      log.error("taking over as index writer failed; retrying", { error });
      await lease.release().catch(() => {});
      return;
    }
    this.d.begin();
  }
}
