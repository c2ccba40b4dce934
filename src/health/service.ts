import type { Store } from "../db/store";
import { type IndexHealth, type IndexingControl, type VectorsStatus, vectorsStatus } from "../search";

export interface HealthInfo {
  status: "ok" | "degraded";
  store: "sqlite" | "postgres";
  index: IndexHealth;
  /** `off`, `ok`, or `unavailable: <reason>` while the index writer cannot make vectors. */
  vectors: VectorsStatus;
  /** Memory extraction jobs of captured conversations, by status (all users). */
  extractionJobs: { pending: number; running: number; failed: number };
}

/** Paths are shown as they are; an object-store URI only as bucket and prefix. */
const redactIndexUri = (uri: string) => uri.replace(/^(s3:\/\/)[^@/]*@/, "$1");

/**
 * `/health`: the process answers (always 200: reads work even when the index cannot be
 * written, so a load balancer keeps the replica), and whether new records become
 * searchable. On the writer the failure is its own; on another replica it is the one
 * the writer recorded, or only visible as changes older than INDEX_BEHIND_MS waiting.
 */
export async function healthInfo(deps: {
  store: Store;
  indexer: IndexingControl;
  /** Whether an embedder is configured (EMBEDDINGS_PROVIDER is not `none`). */
  embedder: boolean;
  extractionJobs?: () => Promise<Record<string, number>>;
}): Promise<HealthInfo> {
  const [index, outage] = await Promise.all([deps.indexer.health(), deps.embedder ? deps.indexer.vectorOutage().catch(() => null) : null]);
  const vectors = vectorsStatus(deps.embedder, outage);
  const jobs = (await deps.extractionJobs?.().catch(() => ({}) as Record<string, number>)) ?? {};
  return {
    status: index.status === "ok" ? "ok" : "degraded",
    store: deps.store.dialect,
    vectors,
    // A queue that cannot drain is not "pending": it is said once, in `vectors`, and drains when the model arrives.
    index: { ...index, uri: redactIndexUri(index.uri), pendingVectors: vectors.startsWith("unavailable") ? 0 : index.pendingVectors },
    extractionJobs: { pending: jobs.pending ?? 0, running: jobs.running ?? 0, failed: jobs.failed ?? 0 },
  };
}
