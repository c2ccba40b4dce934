import type { Scheduler } from "../../lib/scheduler";
import type { IndexOutbox, OutboxRow } from "./outbox-repository";
import type { Waiters } from "./waiters";

/** While a batch gathers, how often it looks whether a search on another replica waits. */
const GATHER_CHECK_MS = 50;
/**
 * The longest a change waits to be committed with others when no caller waits for it:
 * at thousands of writes a second, batches of hundreds instead of a commit every 25 ms.
 */
const BATCH_DELAY_MS = 250;

/**
 * Which outbox rows the text stage takes next. Searches waiting for their owners' rows go
 * first: one user's bulk import never holds up another user's read-your-writes. Every
 * commit costs a LanceDB version, a fragment and CPU the writes need, so a small batch
 * waits for company until its oldest row is BATCH_DELAY_MS old, unless a search (here or
 * on another replica) waits for rows; and many users' interleaved rows are taken as whole
 * backlogs per owner when that makes the batch denser (`outbox.denser`).
 */
export class TextBatches {
  constructor(
    private readonly d: {
      outbox: IndexOutbox;
      batchSize: number;
      waiters: Waiters;
      /** The writer's part of the scheduler: a gathering batch's pause ends with it. */
      tasks: Scheduler;
      isWriter: () => boolean;
    },
  ) {}

  /** The next batch (empty: nothing pending), or null after a small batch gathered company: look again. */
  async next(): Promise<OutboxRow[] | null> {
    const { outbox, batchSize, waiters } = this.d;
    const priority = waiters.priorityOwners();
    const text = priority ? await outbox.priorityBatch(batchSize, priority) : await outbox.nextBatch("text", batchSize);
    if (!text.length || priority) return text;
    const gathering = BATCH_DELAY_MS - (Date.now() - text[0].createdAt);
    if (text.length < batchSize && gathering > 0) {
      await this.gather(gathering);
      return null;
    }
    return outbox.denser("text", text, batchSize);
  }

  /**
   * Lets a small batch gather company for up to `ms`, without re-reading it: ends early
   * when a search here starts waiting (it wakes the pause) or one on another replica says
   * it waits (a one-row read every GATHER_CHECK_MS).
   */
  private async gather(ms: number): Promise<void> {
    const { waiters, tasks } = this.d;
    const until = Date.now() + ms;
    while (Date.now() < until && this.d.isWriter() && !waiters.any && !tasks.stopped) {
      if (await waiters.wantedElsewhere()) return;
      await tasks.pause(Math.min(GATHER_CHECK_MS, until - Date.now()));
    }
  }
}
