import type { Executor } from "../../db/store";
import type { Logger } from "../../lib/log";
import type { ScheduledTask, Scheduler } from "../../lib/scheduler";
import type { LanceStore } from "../lance/lance-store";
import type { IndexWriter } from "./index-writer";
import { RunnerClosed, type JobRunner } from "./job-runner";
import { createPurgeLog } from "./purges-repository";

/**
 * A table is rewritten this far into the bound after its earliest delete: the deletes of
 * the first half share one rewrite, and the second half is left for the rewrite itself
 * and for an outbox that runs behind.
 */
const PURGE_AT = 0.5;
/** A table whose ANN index is being built, or a rewrite that failed, is tried again this much later. */
const RETRY_MS = 1_000;

export interface IndexPurgeOptions {
  /** MNEMO_PURGE_WITHIN_MS: deleted rows leave the index's files within this long of their delete. */
  withinMs: number;
  /** The index writer's part of the scheduler (its stop cancels the next purge). */
  scheduler: Scheduler;
  runner: JobRunner;
  writer: IndexWriter;
  lance: LanceStore;
  db: Executor;
  log: Logger;
  isWriter: () => boolean;
  /** Starts the writer's loop, which starts the ANN builds a rewrite asked for. */
  kick: () => void;
}

/**
 * Deleted means gone from the index's files, within a bound. A LanceDB delete leaves the
 * row's bytes in the table's data file and its terms in the full-text index; an old
 * version keeps them too. So every table with deleted rows (noted in the store of record
 * with the time of the delete, in the transaction that takes it off the outbox) is
 * rewritten without them and its older versions removed (`LanceStore.purgeDeleted`),
 * `PURGE_AT` of `withinMs` after its earliest delete, whether or not its owner writes
 * again. Only the index writer does it, on its runner, so no write of its own is under
 * way; the notes stay in the store, so a restart or a new writer finishes them.
 */
export class IndexPurge {
  /** Tables with deleted rows still in their files → the earliest such delete (ms). */
  private readonly pending = new Map<string, number>();
  private timer: ScheduledTask | null = null;
  private timerAt = Number.POSITIVE_INFINITY;
  private readonly notes = createPurgeLog();

  /** Hears of the writer's deletes from here on. */
  constructor(private readonly o: IndexPurgeOptions) {
    o.writer.onDeletes = (tables) => this.note(tables);
  }

  /** Tables with rows just deleted (or found noted on taking over). */
  note(tables: Map<string, number>): void {
    for (const [table, deletedAt] of tables) {
      const known = this.pending.get(table);
      if (known === undefined || deletedAt < known) this.pending.set(table, deletedAt);
    }
    this.arm(0);
  }

  /** Becoming the writer: what the store says is pending, whoever noted it. */
  async takeOver(): Promise<void> {
    this.pending.clear();
    this.note(await this.notes.pending(this.o.db));
  }

  private dueAt(deletedAt: number): number {
    return deletedAt + this.o.withinMs * PURGE_AT;
  }

  /** Sets the timer for the earliest due table, no sooner than `minDelayMs` from now. */
  private arm(minDelayMs: number): void {
    if (!this.pending.size) return;
    const at = Math.max(Math.min(...[...this.pending.values()].map((t) => this.dueAt(t))), Date.now() + minDelayMs);
    if (this.timer && this.timerAt <= at) return;
    this.timer?.cancel();
    this.timerAt = at;
    this.timer = this.o.scheduler.after(at - Date.now(), "index purge", () => this.run());
  }

  private async run(): Promise<void> {
    this.timer = null;
    this.timerAt = Number.POSITIVE_INFINITY;
    if (!this.o.isWriter()) return;
    let retry = false;
    for (const [table, deletedAt] of [...this.pending]) {
      if (this.dueAt(deletedAt) > Date.now()) continue;
      // A rewrite would restart the table's ANN build; it waits for the build instead.
      if (table === this.o.writer.buildingTable) {
        retry = true;
        continue;
      }
      try {
        await this.o.runner.run(() => this.purge(table));
      } catch (error) {
        if (error instanceof RunnerClosed) return;
        this.o.log.warn("deleted rows not yet removed from an index table; trying again", {
          table,
          reason: (error as Error).message,
        });
        retry = true;
      }
    }
    this.arm(retry ? RETRY_MS : 0);
  }

  private async purge(table: string): Promise<void> {
    // The lease went meanwhile: the note stays in the store for the next writer.
    if (!this.o.isWriter()) return;
    const started = Date.now();
    const vectorIndexDropped = await this.o.lance.purgeDeleted(table, this.o.isWriter);
    // Every row is in the rebuilt full-text indices: the table is as tidy as a compaction leaves it.
    this.o.writer.compaction.compacted(table);
    if (vectorIndexDropped) {
      this.o.writer.vectorTablesWritten.add(table);
      this.o.kick();
    }
    await this.o.writer.announceVersion();
    await this.notes.done(this.o.db, table);
    // Within the job: a delete noted after it (the next batch) is noted afresh.
    this.pending.delete(table);
    this.o.log.debug("deleted rows removed from an index table", { table, ms: Date.now() - started });
  }
}
