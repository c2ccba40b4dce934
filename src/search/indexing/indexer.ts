import type { Scheduler } from "../../lib/scheduler";
import { scopeOf } from "../../lib/scheduler-scope";
import type { PartitionGroup } from "../lance/partitions";
import type { IndexingControl } from "./control";
import type { WrittenSinceIndexed } from "./compaction-policy";
import type { IdleOptimizer } from "./idle-optimizer";
import type { IndexPurge } from "./index-purge";
import { indexHealth, type IndexHealth, type IndexStats } from "./index-health";
import { EMBED_CHUNK, INDEX_VERSION_KEY, type IndexWriter } from "./index-writer";
import { JobRunner, RunnerClosed } from "./job-runner";
import type { VectorIndexBuilds } from "./vector-index-builds";
import { readVectorOutage, type VectorOutage } from "./vector-outage";
import type { TextBatches } from "./text-batches";
import type { VectorStage } from "./vector-stage";
import type { FlushResult, Waiters } from "./waiters";
import type { WriteFailures } from "./write-failures";
import { LEASE_POLL_MS, type WriterTerm } from "./writer-term";
import { type IndexerOptions, wireParts } from "./indexer-parts";

export type { IndexerOptions };
export { LEASE_TTL_MS } from "./writer-term";

const VECTOR_BATCH = 256;
/**
 * How often an idle writer looks for rows written by any process (this one, replicas,
 * the CLI): one indexed MAX() on the outbox. A search waiting for rows wakes it at once.
 */
const OUTBOX_POLL_MS = 50;

/** How often searches paying for a table's unindexed rows may wake the writer to weigh compacting it. */
const PAID_KICK_EVERY_MS = 250;
/** How long status and maintenance routes (the derived index) wait for the owner's rows; searches never wait. */
const DEFAULT_FLUSH_WAIT_MS = 5_000;

/**
 * Drains the outbox into LanceDB: first the text stage (items table, full-text index),
 * then the vector stage (embeddings). Exactly one process — the holder of the `indexer`
 * lease in the store of record — writes; every LanceDB write goes through one runner.
 * Other processes (replicas, the CLI) only read the index and wait for the writer.
 */
export class Indexer implements IndexingControl {
  private readonly runner = new JobRunner();
  private readonly writer: IndexWriter;
  private readonly waiters: Waiters;
  private pumping: Promise<void> | null = null;
  private again = false;
  private stopping = false;
  /**
   * The writer's timers (lease, outbox poll, retries, the gather pause, the idle optimize,
   * search deadlines): its part of the app's scheduler, cancelled as a whole by `stop`.
   */
  private readonly tasks: Scheduler;
  private readonly idle: IdleOptimizer;
  private readonly builds: VectorIndexBuilds;
  private readonly vectors: VectorStage;
  private readonly failures: WriteFailures;
  private readonly purge: IndexPurge;
  private readonly term: WriterTerm;
  private readonly batches: TextBatches;

  constructor(private readonly o: IndexerOptions) {
    this.tasks = scopeOf(o.scheduler);
    ({
      writer: this.writer,
      failures: this.failures,
      builds: this.builds,
      idle: this.idle,
      vectors: this.vectors,
      waiters: this.waiters,
      purge: this.purge,
      term: this.term,
      batches: this.batches,
    } = wireParts(o, {
      runner: this.runner,
      tasks: this.tasks,
      isWriter: () => this.isWriter,
      stopping: () => this.stopping,
      kick: () => this.kick(),
      takeOver: () => this.takeOver(),
      begin: () => this.begin(),
    }));
  }

  /** Holding the lease, and neither stopping nor with the app's scheduler stopped (a shutdown that cancelled it first). */
  get isWriter(): boolean {
    return this.o.lease.held && !this.stopping && !this.tasks.stopped;
  }

  /**
   * Whether this process writes the index and has taken over: what it knew of the index
   * before is forgotten and its tables reopened. Between taking the lease and that, it
   * still reads as a replica does (it follows the writer's newest version): its handles
   * may be older than the previous writer's last commit, whose rows have left the outbox.
   */
  get writesIndex(): boolean {
    return this.isWriter && this.term.tookOver;
  }

  /** An owner's vector table of a group in the current space, once vectors exist. */
  vectorTableFor(ownerId: string, group: PartitionGroup): string | null {
    return this.writer.vectorTableFor(ownerId, group);
  }

  /**
   * The sources written into a full-text table since its index last covered every row, as
   * this writer knows them (compaction-policy.ts); null when it does not know them all, or
   * is not the writer (another process's writes cannot be known here).
   */
  writtenSinceIndexed(table: string): Readonly<WrittenSinceIndexed> | null {
    return this.writesIndex ? this.writer.compaction.writtenSinceIndexed(table) : null;
  }

  /**
   * A search of a full-text table, in this process (`held`: it held the table's rows
   * outside the index among its pending items): the writer weighs compacting it against its
   * searches' cost, and looks once, off the search path, at a table it has not written
   * (left untidy by a stop before the idle optimize: compacted when idle).
   */
  private paidKickAt = 0;

  noteSearch(table: string, held: boolean): void {
    if (!this.isWriter) return;
    if (!this.writer.compaction.noteSearch(table, held)) {
      // Searches paying for rows outside the index (a bulk write just ended): the writer
      // looks at once rather than at its next batch or idle optimize; a compaction runs in
      // the writer's child process, beside the searches (lance/writer-child.ts).
      if (this.writer.compaction.mayBeDue(table) && Date.now() - this.paidKickAt >= PAID_KICK_EVERY_MS) {
        this.paidKickAt = Date.now();
        this.kick();
      }
      return;
    }
    this.runner
      .run(() => this.writer.compaction.inspect(table))
      .then(
        (untidy) => untidy && this.idle.schedule(),
        (error) =>
          error instanceof RunnerClosed ||
          this.o.log.debug("index table not inspected", { table, reason: (error as Error).message }),
      );
  }

  /** Seeks the lease (and keeps seeking it every second) and starts draining when it has it. */
  async start(): Promise<void> {
    await this.writer.loadDimension();
    this.tasks.every(LEASE_POLL_MS, "index lease", () => this.term.tick());
    this.tasks.every(OUTBOX_POLL_MS, "index outbox poll", () => this.pollOutbox());
    await this.term.tick();
  }

  private polling = false;

  private async pollOutbox(): Promise<void> {
    // While writes fail, the retry timer (1 s) tries again, not every poll.
    if (!this.isWriter || this.pumping || this.polling || this.failures.failure) return;
    this.polling = true;
    try {
      if ((await this.o.outbox.pendingTextSeq()) !== null) this.kick();
    } catch {
      // The store is unreachable for a moment; the lease tick reports it.
    } finally {
      this.polling = false;
    }
  }

  /** Becoming the writer: the index may have been changed or rebuilt by the previous one. */
  private async takeOver(): Promise<void> {
    await this.o.lance.reopen();
    await this.writer.takeOver();
    await this.purge.takeOver();
    await this.writer.reconcileSchema();
    await this.writer.reconcileVectorSpace();
    await this.failures.reset();
    this.o.log.info("this process writes the search index", { holder: this.o.lease.holder });
  }

  /** Once taken over: the tables checked beside serving, before the first batch (the runner takes jobs in turn), and the drain. */
  private begin(): void {
    this.runner
      .run(() => this.writer.repairDamaged())
      .catch((error) => {
        if (!(error instanceof RunnerClosed)) this.o.log.error("checking the index tables failed", { error });
      });
    this.kick();
  }

  /** Starts a drain unless one runs; a running drain will look again. */
  kick(): void {
    if (!this.isWriter || this.runner.isClosed) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = this.runner
      .run(() => this.pump())
      .then(() => (this.isWriter ? this.failures.landed(0) : undefined))
      .catch((error) => {
        if (error instanceof RunnerClosed) return;
        this.failures.failed(error);
        this.tasks.after(1_000, "index retry", () => this.kick());
      })
      .finally(() => {
        this.pumping = null;
        void this.waiters.release();
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async pump(): Promise<void> {
    for (;;) {
      if (!this.isWriter) return;
      const text = await this.batches.next();
      if (text === null) continue;
      if (text.length) {
        if (text.some((row) => row.op === "rebuild")) {
          await this.writer.rebuild();
          this.vectors.down = false;
          await this.waiters.afterRebuild();
        } else {
          await this.writer.processText(text);
        }
        await this.waiters.release();
        await this.writer.compact(false, this.builds.running);
        await this.failures.landed(text.length);
        // Keep vectors moving during a long ingest: a small batch per text batch, so a
        // search arriving meanwhile waits at most one small embedding call.
        if (!this.waiters.any) await this.vectors.batch(EMBED_CHUNK);
        continue;
      }
      await this.waiters.release();
      if (await this.vectors.batch(VECTOR_BATCH)) {
        await this.writer.compact(false, this.builds.running);
        await this.failures.landed(0);
        continue;
      }
      await this.writer.compact(false, this.builds.running);
      if (this.isWriter) await this.builds.maybeStart();
      if (!this.again) break;
      this.again = false;
    }
    await this.vectors.scheduleDue();
    // Refused by the stopped scheduler part when the pump ends after `stop` began.
    if (this.writer.compaction.hasDirtyTables) this.idle.schedule();
  }

  /** Resolves when no vector-index build is running (for benches and tests). */
  vectorIndexSettled(): Promise<void> {
    return this.builds.settled();
  }

  /**
   * Whether the idle optimize has nothing left to do: no table written since it last ran,
   * no countdown set, no run under way (tests wait on it rather than on its timing).
   */
  get idleOptimizeSettled(): boolean {
    return !this.writer.compaction.hasDirtyTables && !this.idle.pending;
  }

  /** Runs the idle optimization now: every written table compacted and fully indexed. */
  async settle(): Promise<void> {
    await this.drain();
    await this.runner.run(async () => void (await this.writer.compact(true, false)));
  }

  /** Resolves once the owner's text-stage changes acknowledged before the call are in the index, or at the deadline (`lag`: rows left). */
  flush(ownerId: string, waitMs = DEFAULT_FLUSH_WAIT_MS, kinds?: readonly string[]): Promise<FlushResult> {
    return this.waiters.wait(ownerId, waitMs, kinds);
  }

  /**
   * In a process that does not write the index: moves its view of the index to the
   * newest version when the writer has written since (one small read of the store).
   */
  async followWriter(): Promise<void> {
    if (this.writesIndex) return;
    const version = await this.o.settings.get(this.o.store.db, INDEX_VERSION_KEY);
    if (version === this.seenVersion) return;
    this.seenVersion = version;
    await this.writer.loadDimension();
    await this.o.lance.refresh();
  }

  private seenVersion: string | null = null;

  /** Retries postponed vector rows now instead of at their backoff time. */
  async retryPostponed(): Promise<void> {
    await this.o.outbox.retryPostponed();
    this.vectors.down = false;
    this.kick();
  }

  /** Waits until both stages are empty or the embedder is down (for the CLI, tests and benches). */
  async drain(): Promise<void> {
    for (;;) {
      if (this.pumping) await this.pumping;
      await this.vectorIndexSettled();
      const counts = await this.o.outbox.counts();
      if (!this.isWriter) return;
      if (counts.text === 0 && (counts.vector === 0 || this.vectors.down || !this.o.embedder)) return;
      // Vector rows postponed after a failed embedding wait for their retry: the embedder
      // was down (a retry timer may have cleared `vectors.down` before they came due).
      if (counts.text === 0 && ((await this.o.outbox.nextDueAt("vector")) ?? 0) > Date.now()) return;
      this.vectors.down = false;
      this.kick();
      if (this.pumping) await this.pumping;
      if (this.vectors.down) return;
    }
  }

  /** Progress of the index, for status routes, `/health` and the CLI. */
  async stats(): Promise<IndexStats> {
    const counts = await this.o.outbox.counts();
    return {
      pendingText: counts.text,
      pendingVector: counts.vector,
      vectorSpace: this.o.embedder?.spaceId ?? null,
      vectorDimension: this.writer.dimension,
      lastIndexedAt: this.writer.lastIndexedAt,
      leaseHeld: this.o.lease.held,
    };
  }

  async countSources(): Promise<number> {
    let count = 0;
    for await (const _ of this.writer.allSources()) count++;
    return count;
  }

  vectorOutage = (): Promise<{ raw: string; outage: VectorOutage } | null> =>
    readVectorOutage(this.o.settings, this.o.store.db);

  health(): Promise<IndexHealth> {
    const { lance, lease, outbox, settings, store } = this.o;
    return indexHealth({
      uri: lance.uri,
      lease,
      outbox,
      settings,
      db: store.db,
      isWriter: this.isWriter,
      // This process's ongoing write failure while it writes the index (cleared when a batch lands).
      ownFailure: this.isWriter ? this.failures.failure : null,
      stats: () => this.stats(),
    });
  }

  /**
   * Stops: first every timer of the writer is cancelled (lease, poll, retries, the idle
   * optimize, a gathering batch's pause) and its scheduler part refuses new ones, so
   * nothing the pump's tail or a search does from here on schedules anything; searches
   * waiting for the index are answered from it as it is. Then nothing new starts, running
   * jobs (a batch, a compaction, an ANN build) finish, the text stage is drained so nothing
   * acknowledged waits on a restart, and the lease is released for another replica.
   */
  async stop(): Promise<void> {
    // The app's scheduler may have been stopped first: the text stage is drained all the same.
    const wasWriter = this.o.lease.held && !this.stopping;
    this.stopping = true;
    // Cancels at once; the runs it started (a lease tick, a retry) are awaited below.
    const tasksSettled = this.tasks.stop();
    this.waiters.releaseAll();
    await this.runner.close(async () => {
      if (!wasWriter) return;
      for (
        let batch = await this.o.outbox.nextBatch("text", this.o.batchSize);
        batch.length;
        batch = await this.o.outbox.nextBatch("text", this.o.batchSize)
      ) {
        if (batch.some((row) => row.op === "rebuild")) break;
        await this.writer.processText(batch);
      }
    });
    if (this.pumping) await this.pumping;
    await tasksSettled;
    this.waiters.releaseAll();
    await this.o.lease.release().catch(() => {});
  }

  /** The writer's timers waiting to fire (0 once stopped: see `stop`), for tests. */
  get pendingTimers(): number {
    return this.tasks.pendingCount;
  }
}
