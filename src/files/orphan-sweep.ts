import type { Logger } from "../lib/log";
import type { ScheduledTask, Scheduler } from "../lib/scheduler";
import type { FileService } from "./service";

export interface OrphanSweepOptions {
  files: FileService;
  /** Only one process sweeps: the index writer (the lease holder), so replicas do not repeat each other's listing. */
  isSweeper: () => boolean;
  log: Logger;
  /** The owner of the sweep's timer: its `stop` cancels the next sweep and waits for one under way. */
  scheduler: Scheduler;
  /** Between sweeps (0: never). */
  everyMs: number;
  /** A blob younger than this is left alone: its upload may still be committing its row. */
  minAgeMs: number;
}

/** The first sweep waits this long after start: the server warms up first. */
const FIRST_SWEEP_AFTER_MS = 60_000;

/**
 * Sweeps, on the scheduler, the blobs no file or upload part points at: bytes left by a
 * crash between writing them and committing their row (`FileService.sweepOrphanBlobs`).
 * Sweeps never overlap (the scheduler runs the next one after the previous settles).
 */
export function scheduleOrphanSweep(o: OrphanSweepOptions): ScheduledTask {
  if (o.everyMs <= 0) return { cancel() {} };
  const sweep = async () => {
    if (!o.isSweeper()) return;
    try {
      const removed = await o.files.sweepOrphanBlobs(o.minAgeMs);
      if (removed.length)
        o.log.info("removed file bytes no file points at (uploads interrupted by a crash)", { blobs: removed.length });
    } catch (error) {
      o.log.warn("sweeping orphaned file bytes failed; trying again at the next sweep", {
        reason: (error as Error).message,
      });
    }
  };
  return o.scheduler.every(o.everyMs, "orphan-blob-sweep", sweep, Math.min(FIRST_SWEEP_AFTER_MS, o.everyMs));
}
