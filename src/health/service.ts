import type { Store } from "../db/store";
import {
  type createOutbox,
  type IndexHealth,
  type IndexingControl,
  type VectorsStatus,
  vectorsStatus,
} from "../search";

type JobCounts = { pending: number; running: number; failed: number };

/** What the server's operator sees: the index as the process sees it, extraction jobs of all users. */
export interface OperatorHealth {
  status: "ok" | "degraded";
  store: "sqlite" | "postgres";
  index: IndexHealth;
  /** `off`, `ok`, or `unavailable: <reason>` while the index writer cannot make vectors. */
  vectors: VectorsStatus;
  /** Memory extraction jobs of captured conversations, by status (all users). */
  extractionJobs: JobCounts;
}

/** What a user's credential sees: whether the index keeps up, and only that user's waiting changes and jobs. */
export interface UserHealth {
  status: "ok" | "degraded";
  store: "sqlite" | "postgres";
  index: Pick<IndexHealth, "status" | "pending" | "pendingVectors" | "oldestPendingAt">;
  vectors: VectorsStatus;
  extractionJobs: JobCounts;
}

export interface HealthDeps {
  store: Store;
  indexer: IndexingControl;
  /** The outbox's reads (the services' outbox only writes). */
  outbox: Pick<ReturnType<typeof createOutbox>, "counts" | "oldestPendingText">;
  /** Whether an embedder is configured (EMBEDDINGS_PROVIDER is not `none`). */
  embedder: boolean;
  /** Extraction jobs by status: of every user, or of one owner. */
  extractionJobs?: (ownerId?: string) => Promise<Record<string, number>>;
}

/** Paths are shown as they are; an object-store URI only as bucket and prefix. */
const redactIndexUri = (uri: string) => uri.replace(/^(s3:\/\/)[^@/]*@/, "$1");

/**
 * `/health`: the process answers (always 200: reads work even when the index cannot be
 * written, so a load balancer keeps the replica), and whether new records become
 * searchable. On the writer the failure is its own; on another replica it is the one
 * the writer recorded, or only visible as changes older than INDEX_BEHIND_MS waiting.
 * The index's location, the replicas' ids (host, pid), the last write error and counts
 * over all users describe the server: they are the operator's. A user sees their own.
 */
export function createHealth(deps: HealthDeps) {
  const jobs = async (ownerId?: string): Promise<JobCounts> => {
    const counts = (await deps.extractionJobs?.(ownerId).catch(() => ({}) as Record<string, number>)) ?? {};
    return { pending: counts.pending ?? 0, running: counts.running ?? 0, failed: counts.failed ?? 0 };
  };
  const verdict = (index: IndexHealth) => (index.status === "ok" ? "ok" : "degraded") as "ok" | "degraded";
  const vectors = async () =>
    vectorsStatus(deps.embedder, deps.embedder ? await deps.indexer.vectorOutage().catch(() => null) : null);
  // A queue that cannot drain is not "pending": it is said once, in `vectors`, and drains when the model arrives.
  const waitingForVectors = (status: VectorsStatus, count: number | null) =>
    status.startsWith("unavailable") ? 0 : count;
  return {
    async forOperator(): Promise<OperatorHealth> {
      const [index, status] = await Promise.all([deps.indexer.health(), vectors()]);
      return {
        status: verdict(index),
        store: deps.store.dialect,
        index: {
          ...index,
          uri: redactIndexUri(index.uri),
          pendingVectors: waitingForVectors(status, index.pendingVectors),
        },
        vectors: status,
        extractionJobs: await jobs(),
      };
    },
    async forUser(userId: string): Promise<UserHealth> {
      const [index, status] = await Promise.all([deps.indexer.health(), vectors()]);
      // Counts the store cannot give now are unknown (null), as in the operator's view.
      const [pending, oldest] = await Promise.all([
        deps.outbox.counts(userId).catch(() => null),
        deps.outbox.oldestPendingText(userId).catch(() => null),
      ]);
      return {
        status: verdict(index),
        store: deps.store.dialect,
        index: {
          status: index.status,
          pending: pending?.text ?? null,
          pendingVectors: waitingForVectors(status, pending?.vector ?? null),
          oldestPendingAt: oldest ? new Date(oldest).toISOString() : null,
        },
        vectors: status,
        extractionJobs: await jobs(userId),
      };
    },
    async forAnyone(): Promise<Pick<OperatorHealth, "status" | "store">> {
      return { status: verdict(await deps.indexer.health()), store: deps.store.dialect };
    },
  };
}
export type Health = ReturnType<typeof createHealth>;
