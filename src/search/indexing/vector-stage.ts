import type { Logger } from "../../lib/log";
import type { ScheduledTask, Scheduler } from "../../lib/scheduler";
import type { Embedder } from "../embedders/embedder";
import type { IndexWriter } from "./index-writer";
import type { IndexOutbox } from "./outbox-repository";

/**
 * The vector stage of the index writer: embedding batches while the embedder answers,
 * the embedder's outage (one warning per outage, not one per retry), and the timer that
 * tries again. An outage pauses the whole stage, one batch tried per wait (1 s, 2 s, 4 s
 * ... up to 5 minutes): rows never tried are due at once, and retrying as soon as the
 * earliest row came due would try a batch every 50 ms for as long as the embedder is
 * down (a server without its embedding model spent a tenth of its event loop on it).
 */
export class VectorStage {
  /** The embedder failed: no vector batch until the retry (or one is asked for). */
  down = false;
  /** One warning per outage, not one per retry. */
  private warned = false;
  /** When the stage tries the embedder again after an outage (the outage's record says: vector-outage.ts). */
  private retryAt = 0;
  private retry: ScheduledTask | null = null;

  constructor(
    private readonly o: {
      outbox: IndexOutbox;
      embedder: Embedder | null;
      writer: IndexWriter;
      log: Logger;
      /** The writer's part of the scheduler. */
      tasks: Scheduler;
      /** Whether an ANN index build runs (no vector batch meanwhile). */
      building: () => boolean;
      /** Starts a drain. */
      kick: () => void;
    },
  ) {}

  /** Processes one vector batch when one is due; false when there was nothing to do. */
  async batch(size: number): Promise<boolean> {
    if (!this.o.embedder || this.down || this.o.building()) return false;
    const rows = await this.o.outbox.nextBatch("vector", size);
    if (!rows.length) return false;
    return this.o.writer
      .processVectors(rows, (error, retryAt) => {
        // The local embedder explains its own state in one line; others are explained here.
        if (!this.warned && this.o.embedder?.provider !== "local") {
          this.o.log.warn("embedder unavailable; vectors will be filled in later", { reason: error.message });
        }
        this.warned = true;
        this.down = true;
        this.retryAt = retryAt;
        // A retry set for an earlier failure (a drain or a retry asked for tried before it) gives way to this one's.
        this.retry?.cancel();
        this.retry = null;
      })
      .then((done) => {
        if (done) this.warned = false;
        return done;
      });
  }

  /**
   * Schedules a drain: while the embedder is down, for the outage's retry; otherwise for
   * when the earliest postponed vector row comes due.
   */
  async scheduleDue(): Promise<void> {
    if (!this.o.embedder) return;
    if (this.down) {
      this.retry ??= this.o.tasks.after(Math.max(50, this.retryAt - Date.now()), "index vector retry", () => {
        this.retry = null;
        this.down = false;
        this.o.kick();
      });
      return;
    }
    const due = await this.o.outbox.nextDueAt("vector");
    if (due === null) return;
    this.o.tasks.after(Math.max(50, due - Date.now()), "index vector retry", () => {
      this.down = false;
      this.o.kick();
    });
  }
}
