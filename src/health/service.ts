import { createSettings } from "../db/leases";
import type { Store } from "../db/store";
import type { Indexer } from "../search/indexing/indexer";
import type { Outbox } from "../search/indexing/outbox";
import { INDEX_FAILURE_KEY, indexStatus, parseIndexFailure, type IndexStatus } from "../search/indexing/write-failures";

export interface IndexHealth {
  uri: string;
  writer: boolean;
  replicaId: string;
  writerId: string | null;
  status: IndexStatus;
  pending: number | null;
  pendingVectors: number | null;
  oldestPendingAt: string | null;
  lastIndexedAt: string | null;
  lastError: string | null;
  failingSince: string | null;
  consecutiveFailures: number;
}

export interface HealthInfo {
  status: "ok" | "degraded";
  store: "sqlite" | "postgres";
  index: IndexHealth;
}

/** Paths are shown as they are; an object-store URI only as bucket and prefix. */
const redactIndexUri = (uri: string) => uri.replace(/^(s3:\/\/)[^@/]*@/, "$1");

const settings = createSettings();

/** What the store of record says about the index; null when it does not answer (the answer is still given). */
async function outboxView(store: Store, outbox: Outbox, indexer: Indexer) {
  try {
    const [stats, oldest, recorded] = await Promise.all([indexer.stats(), outbox.oldestPendingText(), settings.get(store.db, INDEX_FAILURE_KEY)]);
    return { stats, oldest, recorded: parseIndexFailure(recorded) };
  } catch {
    return null;
  }
}

/**
 * `/health`: the process answers (always 200: reads work even when the index cannot be
 * written, so a load balancer keeps the replica), and whether new records become
 * searchable. On the writer the failure is its own; on another replica it is the one
 * the writer recorded, or only visible as changes older than INDEX_BEHIND_MS waiting.
 */
export async function healthInfo(deps: { store: Store; outbox: Outbox; indexer: Indexer; indexUri: string }): Promise<HealthInfo> {
  const { store, outbox, indexer } = deps;
  const [writerId, view] = await Promise.all([indexer.currentWriter().catch(() => null), outboxView(store, outbox, indexer)]);
  const { status, failure } = indexStatus({
    own: indexer.writeFailure,
    recorded: view?.recorded ?? null,
    writerId,
    pendingText: view?.stats.pendingText ?? 0,
    oldestPendingAgeMs: view?.oldest ? Date.now() - view.oldest : null,
  });
  return {
    status: status === "ok" ? "ok" : "degraded",
    store: store.dialect,
    index: {
      uri: redactIndexUri(deps.indexUri),
      writer: indexer.isWriter,
      replicaId: indexer.holderId,
      writerId,
      status,
      pending: view?.stats.pendingText ?? null,
      pendingVectors: view?.stats.pendingVector ?? null,
      oldestPendingAt: view?.oldest ? new Date(view.oldest).toISOString() : null,
      lastIndexedAt: view?.stats.lastIndexedAt ?? null,
      lastError: failure?.reason ?? null,
      failingSince: failure?.since ?? null,
      consecutiveFailures: failure?.failures ?? 0,
    },
  };
}
