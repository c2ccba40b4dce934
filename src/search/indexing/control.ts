import type { IndexHealth, IndexStats } from "./index-health";
import type { VectorOutage } from "./vector-outage";

/**
 * The indexing side as the rest of the app drives it (the server, the CLI, status routes,
 * `/health`, tests and benches): start and stop the index writer, wait for it, read its
 * progress. The writer itself (its loop, LanceDB, the outbox rows) stays inside.
 */
export interface IndexingControl {
  /** Whether this process holds the index writer lease now (and is not stopping). */
  readonly isWriter: boolean;
  /** Seeks the lease (and keeps seeking it) and starts draining the outbox when it has it. */
  start(): Promise<void>;
  /**
   * Cancels every timer of the writer first, then lets running jobs finish, drains the
   * text stage and releases the lease: nothing is scheduled, and nothing written to the
   * index, after it resolves.
   */
  stop(): Promise<void>;
  /**
   * Read-your-writes for status and maintenance routes: resolves once the owner's changes
   * (of these kinds) acknowledged before the call are in the index, or after `waitMs`.
   */
  flush(ownerId: string, waitMs?: number, kinds?: readonly string[]): Promise<{ lag: number }>;
  /** Waits until both stages are empty or the embedder is down (for the CLI, tests and benches). */
  drain(): Promise<void>;
  /** Runs the idle optimization now: every written table compacted and fully indexed. */
  settle(): Promise<void>;
  /** Whether the idle optimize has nothing left to do (no table written since, none pending or running): for tests. */
  readonly idleOptimizeSettled: boolean;
  /** Resolves when no vector-index build is running (for benches and tests). */
  vectorIndexSettled(): Promise<void>;
  /** Retries postponed vector rows now instead of at their backoff time. */
  retryPostponed(): Promise<void>;
  stats(): Promise<IndexStats>;
  /** How many sources the domains hold (what a rebuild indexes). */
  countSources(): Promise<number>;
  /** Why the writer (this process or another) cannot make vectors now, as it recorded it; null when it can. */
  vectorOutage(): Promise<{ raw: string; outage: VectorOutage } | null>;
  /** The index as `/health` reports it. */
  health(): Promise<IndexHealth>;
}
