import type { Settings } from "../db/leases";
import type { Executor } from "../db/store";

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
}

/** The writer's side: a failed batch is recorded (every one, so followers see it is current), a landed batch clears it. */
export class VectorOutages {
  private current: VectorOutage | null = null;

  constructor(private readonly o: { settings: Settings; db: Executor }) {}

  async failed(error: unknown): Promise<void> {
    const now = new Date().toISOString();
    const reason = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ").trim().slice(0, 300);
    this.current = { since: this.current?.since ?? now, lastAt: now, reason, failures: (this.current?.failures ?? 0) + 1 };
    await this.publish(JSON.stringify(this.current));
  }

  async landed(): Promise<void> {
    if (!this.current) return;
    this.current = null;
    await this.publish("");
  }

  /** A new writer starts clean: a record left by a previous one goes. */
  async reset(): Promise<void> {
    this.current = null;
    await this.publish("");
  }

  private async publish(value: string): Promise<void> {
    // The store may be what fails; the record is a courtesy to followers, never a reason to fail a batch.
    await this.o.settings.set(this.o.db, VECTOR_OUTAGE_KEY, value).catch(() => {});
  }
}

/** The recorded outage as the settings hold it (`raw`, to tell a new failure from an old one), or null. */
export async function readVectorOutage(settings: Settings, db: Executor): Promise<{ raw: string; outage: VectorOutage } | null> {
  const raw = await settings.get(db, VECTOR_OUTAGE_KEY);
  if (!raw) return null;
  try {
    return { raw, outage: JSON.parse(raw) as VectorOutage };
  } catch {
    return null;
  }
}
