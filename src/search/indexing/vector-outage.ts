import type { Settings } from "../../db/leases";
import type { Executor } from "../../db/store";

/**
 * Settings key where the index writer records why vectors cannot be made now (no
 * embedding model, the embeddings API down), so that another process following the
 * writer (`mnemo reindex --embeddings` beside a running server) can stop with the reason
 * instead of waiting for vectors that do not come.
 */
export const VECTOR_OUTAGE_KEY = "index_vector_outage";

/** An ongoing run of failed embedding batches. */
export interface VectorOutage {
  /** When the first failure of the run happened (ISO). */
  since: string;
  /** When the latest one happened (ISO); changes with every failed batch. */
  lastAt: string;
  /** The embedder's reason, on one line. */
  reason: string;
  /** Failed batches in a row. */
  failures: number;
  /**
   * When the writer tries the embedder again (ISO): the wait doubles with each failure in a
   * row, from 1 s up to 5 minutes, and the stage waits as a whole (vector-stage.ts).
   */
  retryAt: string;
}

/** The longest wait between two tries of an embedder that is down. */
const MAX_RETRY_MS = 300_000;

/** The writer's side: a failed batch is recorded (every one, so followers see it is current), a landed batch clears it. */
export class VectorOutages {
  private current: VectorOutage | null = null;
  /** A record may be left by an earlier writer: the first batch that embeds clears it. */
  private inherited = true;

  constructor(private readonly o: { settings: Settings; db: Executor }) {}

  async failed(error: unknown): Promise<VectorOutage> {
    const at = Date.now();
    const now = new Date(at).toISOString();
    const reason = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ").trim().slice(0, 300);
    const failures = (this.current?.failures ?? 0) + 1;
    this.current = {
      since: this.current?.since ?? now,
      lastAt: now,
      reason,
      failures,
      retryAt: new Date(at + Math.min(MAX_RETRY_MS, 1_000 * 2 ** Math.min(failures - 1, 9))).toISOString(),
    };
    this.inherited = false;
    await this.publish(JSON.stringify(this.current));
    return this.current;
  }

  async landed(): Promise<void> {
    if (!this.current && !this.inherited) return;
    this.current = null;
    this.inherited = false;
    await this.publish("");
  }

  /**
   * This process became the writer: a record there may be another writer's. It is not
   * cleared here (a second takeover racing a failed batch would wipe a current reason),
   * but by the first batch that embeds, or replaced by the next failure.
   */
  tookOver(): void {
    this.inherited = true;
  }

  private async publish(value: string): Promise<void> {
    // The store may be what fails; the record is a courtesy to followers, never a reason to fail a batch.
    await this.o.settings.set(this.o.db, VECTOR_OUTAGE_KEY, value).catch(() => {});
  }
}

/** The recorded outage as the settings hold it (`raw`, to tell a new failure from an old one), or null. */
export async function readVectorOutage(
  settings: Settings,
  db: Executor,
): Promise<{ raw: string; outage: VectorOutage } | null> {
  const raw = await settings.get(db, VECTOR_OUTAGE_KEY);
  if (!raw) return null;
  try {
    return { raw, outage: JSON.parse(raw) as VectorOutage };
  } catch {
    return null;
  }
}
