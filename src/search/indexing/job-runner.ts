/**
 * The one runner of every LanceDB write of this process: outbox batches, compaction,
 * version cleanup, reconciliation and rebuilds run one at a time, in order. The ANN
 * index build alone runs beside them (it takes seconds and only reads the rows it
 * indexes), but it is started and awaited through here too. After `close()` nothing
 * new starts, and `close()` resolves once everything that was running has finished.
 */
export class JobRunner {
  private tail: Promise<unknown> = Promise.resolve();
  private readonly background = new Set<Promise<unknown>>();
  private closed = false;

  get isClosed(): boolean {
    return this.closed;
  }

  /** Runs `job` after every job queued before it; rejects with `RunnerClosed` once closed. */
  run<T>(job: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new RunnerClosed());
    const result = this.tail.then(() => (this.closed ? Promise.reject(new RunnerClosed()) : job()));
    this.tail = result.catch(() => {});
    return result;
  }

  /** Runs `job` beside the serial jobs; tracked so that `close()` waits for it. Null once closed. */
  runBeside<T>(job: () => Promise<T>): Promise<T> | null {
    if (this.closed) return null;
    const promise = job();
    const tracked = promise.catch(() => {}).finally(() => this.background.delete(tracked));
    this.background.add(tracked);
    return promise;
  }

  /**
   * Refuses new jobs (queued ones that have not started are dropped), waits for the
   * running ones, then runs `last` (the shutdown's drain of the text stage) alone.
   */
  async close(last?: () => Promise<void>): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.tail;
    await Promise.all([...this.background]);
    if (last) await last();
  }
}

export class RunnerClosed extends Error {
  constructor() {
    super("the index writer is stopping");
  }
}
