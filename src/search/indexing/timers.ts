/**
 * The indexer's timers: one-shot callbacks that `clear()` cancels at shutdown, and one
 * interruptible pause (a waiting search cuts a batch's gathering short).
 */
export class Timers {
  private readonly pending = new Set<ReturnType<typeof setTimeout>>();
  private wakeUp: (() => void) | null = null;

  /** Runs `fn` after `ms`, unless cleared first. */
  later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.pending.delete(timer);
      fn();
    }, ms);
    this.pending.add(timer);
  }

  /** Waits `ms`, or less when `wake()` is called. */
  pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      // Never negative: a deadline computed before an await may have passed (Node warns).
      const timer = setTimeout(done, Math.max(0, ms));
      this.wakeUp = done;
    });
  }

  wake(): void {
    this.wakeUp?.();
  }

  clear(): void {
    for (const timer of this.pending) clearTimeout(timer);
    this.pending.clear();
    this.wake();
  }
}
