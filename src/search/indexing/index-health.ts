import type { Lease, Settings } from "../../db/leases";
import type { Executor } from "../../db/store";
import type { IndexOutbox } from "./outbox-repository";
import {
  INDEX_FAILURE_KEY,
  indexStatus,
  parseIndexFailure,
  type IndexFailure,
  type IndexStatus,
} from "./write-failures";

/** The index's progress, for status routes, `/health` and the CLI. */
export interface IndexStats {
  pendingText: number;
  pendingVector: number;
  vectorSpace: string | null;
  vectorDimension: number | null;
  lastIndexedAt: string | null;
  leaseHeld: boolean;
}

/** The index as `/health` reports it: who writes it, how far behind it is, and an ongoing write failure. */
export interface IndexHealth {
  /** Where the index lives, as configured (the caller redacts what it shows). */
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

export interface IndexHealthSources {
  uri: string;
  lease: Lease;
  outbox: IndexOutbox;
  settings: Settings;
  db: Executor;
  isWriter: boolean;
  /** This process's ongoing write failure while it writes the index. */
  ownFailure: IndexFailure | null;
  stats: () => Promise<IndexStats>;
}

/** What the store of record says about the index; null when it does not answer (the answer is still given). */
async function storeView(s: IndexHealthSources) {
  try {
    const [stats, oldest, recorded] = await Promise.all([
      s.stats(),
      s.outbox.oldestPendingText(),
      s.settings.get(s.db, INDEX_FAILURE_KEY),
    ]);
    return { stats, oldest, recorded: parseIndexFailure(recorded) };
  } catch {
    return null;
  }
}

/**
 * The index's health as this process sees it. On the writer the failure is its own; on
 * another replica it is the one the writer recorded, or only visible as changes older
 * than INDEX_BEHIND_MS waiting.
 */
export async function indexHealth(s: IndexHealthSources): Promise<IndexHealth> {
  const [writerId, view] = await Promise.all([s.lease.currentHolder().catch(() => null), storeView(s)]);
  const { status, failure } = indexStatus({
    own: s.ownFailure,
    recorded: view?.recorded ?? null,
    writerId,
    pendingText: view?.stats.pendingText ?? 0,
    oldestPendingAgeMs: view?.oldest ? Date.now() - view.oldest : null,
  });
  return {
    uri: s.uri,
    writer: s.isWriter,
    replicaId: s.lease.holder,
    writerId,
    status,
    pending: view?.stats.pendingText ?? null,
    pendingVectors: view?.stats.pendingVector ?? null,
    oldestPendingAt: view?.oldest ? new Date(view.oldest).toISOString() : null,
    lastIndexedAt: view?.stats.lastIndexedAt ?? null,
    lastError: failure?.reason ?? null,
    failingSince: failure?.since ?? null,
    consecutiveFailures: failure?.failures ?? 0,
  };
}

/** The outage the live writer recorded, as any process (or `mnemo doctor`, with no server) reads it from the store. */
export async function recordedIndexFailure(settings: Settings, db: Executor): Promise<IndexFailure | null> {
  return parseIndexFailure(await settings.get(db, INDEX_FAILURE_KEY));
}
