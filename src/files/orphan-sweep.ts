import type { Logger } from "../lib/log";
import type { FileService } from "./service";

export interface OrphanSweepOptions {
  files: FileService;
  /** Only one process sweeps: the index writer (the lease holder), so replicas do not repeat each other's listing. */
  isSweeper: () => boolean;
  log: Logger;
  /** Between sweeps (0: never). */
  everyMs: number;
  /** A blob younger than this is left alone: its upload may still be committing its row. */
  minAgeMs: number;
}

/** The first sweep waits this long after start: the server warms up first. */
const FIRST_SWEEP_AFTER_MS = 60_000;

/**
 * Sweeps, on a timer, the blobs no file or upload part points at: bytes left by a crash
 * between writing them and committing their row (`FileService.sweepOrphanBlobs`).
 */
export function scheduleOrphanSweep(o: OrphanSweepOptions): { stop(): Promise<void> } {
  if (o.everyMs <= 0) return { stop: async () => {} };
  let running: Promise<void> | null = null;
  const sweep = () => {
    if (running || !o.isSweeper()) return;
    running = o.files
      .sweepOrphanBlobs(o.minAgeMs)
      .then((removed) => {
        if (removed.length) o.log.info("removed file bytes no file points at (uploads interrupted by a crash)", { blobs: removed.length });
      })
      .catch((error) => o.log.warn("sweeping orphaned file bytes failed; trying again at the next sweep", { reason: (error as Error).message }))
      .finally(() => (running = null));
  };
  const first = setTimeout(sweep, Math.min(FIRST_SWEEP_AFTER_MS, o.everyMs));
  const timer = setInterval(sweep, o.everyMs);
  return {
    async stop() {
      clearTimeout(first);
      clearInterval(timer);
      await running;
    },
  };
}
