import type { Logger } from "../../lib/log";
import type { ScheduledTask, Scheduler } from "../../lib/scheduler";
import { releaseFreedMemory } from "../../lib/memory-trim";
import type { IndexWriter } from "./index-writer";
import type { LanceStore } from "../lance/lance-store";
import { RunnerClosed, type JobRunner } from "./job-runner";

/** Tables compacted per runner job when idle. */
const IDLE_COMPACT_TABLES = 8;

export interface IdleOptimizerOptions {
  delayMs: number;
  /** The index writer's part of the scheduler (its stop cancels the countdown). */
  scheduler: Scheduler;
  runner: JobRunner;
  writer: IndexWriter;
  lance: LanceStore;
  log: Logger;
  isWriter: () => boolean;
  /** Whether an ANN index build runs (vector tables wait for it). */
  building: () => boolean;
}

/**
 * The index writer's tidying up: `delayMs` after the last index write (or after a search
 * found a table left untidy), every dirty table is compacted, a few per runner job so
 * that batches queued meanwhile go between, the LanceDB connection is renewed, and freed
 * native memory is handed back.
 */
export class IdleOptimizer {
  private countdown: ScheduledTask | null = null;
  private running = false;

  constructor(private readonly o: IdleOptimizerOptions) {}

  /** Whether a countdown is set or a run is under way: until both end, the connection may still be renewed. */
  get pending(): boolean {
    return this.countdown !== null || this.running;
  }

  /** (Re)starts the countdown (nothing once the scheduler part is stopped). */
  schedule(): void {
    this.countdown?.cancel();
    this.countdown = this.o.scheduler.after(this.o.delayMs, "index idle optimize", async () => {
      this.countdown = null;
      this.running = true;
      try {
        await this.run();
      } finally {
        this.running = false;
      }
    });
  }

  private async run(): Promise<void> {
    try {
      for (let more = true; more && this.o.isWriter(); ) {
        more = await this.o.runner.run(() => this.o.writer.compact(true, this.o.building(), IDLE_COMPACT_TABLES));
      }
      // The memory LanceDB keeps for each full-text index update goes with the connection
      // (not while an ANN index build still uses it).
      if (this.o.isWriter() && !this.o.building())
        await this.o.runner.run(() => this.o.lance.recycleConnectionAfter(1));
    } catch (error) {
      if (!(error instanceof RunnerClosed)) this.o.log.warn("index optimize failed", { error });
      return;
    }
    releaseFreedMemory();
  }
}
