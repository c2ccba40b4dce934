import type { Lease } from "../../db/leases";
import type { Scheduler } from "../../lib/scheduler";
import { IdleOptimizer } from "./idle-optimizer";
import { IndexPurge } from "./index-purge";
import { IndexWriter, type IndexWriterOptions } from "./index-writer";
import type { JobRunner } from "./job-runner";
import { TextBatches } from "./text-batches";
import { VectorIndexBuilds } from "./vector-index-builds";
import { VectorStage } from "./vector-stage";
import { createWaiters } from "./waiters";
import { WriteFailures } from "./write-failures";
import { WriterTerm } from "./writer-term";

export interface IndexerOptions extends IndexWriterOptions {
  lease: Lease;
  /** A replica that only serves: it never takes the writer's lease (MNEMO_INDEX_WRITER=never). */
  neverWrite?: boolean;
  /** The app's scheduler: every timer of the index writer runs on its own part of it (see `stop`). */
  scheduler: Scheduler;
  batchSize: number;
  /**
   * Exact vector search reads every vector: at 384 dimensions it stays within a few ms
   * up to about 8k rows (the default); past it the indexer builds an ANN index.
   */
  vectorIndexMinRows: number;
  /**
   * After this long without index writes, tables written since their last compaction are
   * optimized, which also folds the new rows into the full-text and vector indices (rows
   * outside an index are scanned at every search).
   */
  idleOptimizeMs: number;
  /** Deleted rows leave the index's files within this long of their delete (index-purge.ts). */
  purgeWithinMs: number;
}

/** What the Indexer lends its parts: its runner and timers, and the steps only it takes. */
export interface IndexerHost {
  runner: JobRunner;
  /** The writer's part of the app's scheduler. */
  tasks: Scheduler;
  isWriter: () => boolean;
  stopping: () => boolean;
  /** Starts a drain unless one runs. */
  kick: () => void;
  /** Becoming the writer (run on the runner). */
  takeOver: () => Promise<void>;
  /** Once taken over. */
  begin: () => void;
}

/** The index writer's parts, wired to one another and to the Indexer that drives them (indexer.ts). */
export function wireParts(o: IndexerOptions, h: IndexerHost) {
  const writer = new IndexWriter(o, () => waiters.any);
  const failures = new WriteFailures({
    log: o.log,
    outbox: o.outbox,
    settings: o.settings,
    db: o.store.db,
    holder: o.lease.holder,
  });
  const builds = new VectorIndexBuilds(
    {
      lance: o.lance,
      log: o.log,
      runner: h.runner,
      minRows: o.vectorIndexMinRows,
      onDone: h.kick,
      building: (table) => (writer.buildingTable = table),
    },
    writer.vectorTablesWritten,
  );
  const idle = new IdleOptimizer({
    delayMs: o.idleOptimizeMs,
    scheduler: h.tasks,
    runner: h.runner,
    writer,
    lance: o.lance,
    log: o.log,
    isWriter: h.isWriter,
    building: () => builds.running,
  });
  const vectors = new VectorStage({
    outbox: o.outbox,
    embedder: o.embedder,
    writer,
    log: o.log,
    tasks: h.tasks,
    building: () => builds.running,
    kick: h.kick,
  });
  const waiters = createWaiters({
    outbox: o.outbox,
    settings: o.settings,
    db: o.store.db,
    scheduler: h.tasks,
    isWriter: h.isWriter,
    onWait: () => {
      h.tasks.wake();
      h.kick();
    },
  });
  const purge = new IndexPurge({
    withinMs: o.purgeWithinMs,
    scheduler: h.tasks,
    runner: h.runner,
    writer,
    lance: o.lance,
    db: o.store.db,
    log: o.log,
    isWriter: h.isWriter,
    kick: h.kick,
  });
  const term = new WriterTerm({
    lease: o.lease,
    neverWrite: o.neverWrite,
    log: o.log,
    runner: h.runner,
    stopping: h.stopping,
    takeOver: h.takeOver,
    begin: h.begin,
    // A reader follows the writer's vector table as it appears.
    reading: () => writer.loadDimension().catch(() => {}),
  });
  const batches = new TextBatches({
    outbox: o.outbox,
    batchSize: o.batchSize,
    waiters,
    tasks: h.tasks,
    isWriter: h.isWriter,
  });
  return { writer, failures, builds, idle, vectors, waiters, purge, term, batches };
}
