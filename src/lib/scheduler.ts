/**
 * The one owner of background timers. Every timer, interval and deferred task of a
 * running server is scheduled here (index polling, the lease, retries, the idle optimize,
 * the orphan sweep, MCP session expiry, deferred closes of LanceDB handles), so that
 * `stop()` can cancel them all before it drains what is running: nothing is scheduled,
 * and nothing starts, after `stop()` began.
 *
 * Tasks may be async; a repeating task never overlaps itself (the next run is scheduled
 * when the previous one settles). A task's error is reported to `onError`, never thrown
 * into the timer. Timers are unref'd: they never keep a process alive on their own.
 */
export interface ScheduledTask {
  /** Cancels this task's pending run (a run in progress finishes). */
  cancel(): void;
}

export interface Scheduler {
  /** Runs `task` once after `ms` (clamped at 0). A no-op returning a dead handle once stopping. */
  after(ms: number, name: string, task: () => unknown): ScheduledTask;
  /** Runs `task` every `ms`, first after `firstMs` (default `ms`), never overlapping itself. */
  every(ms: number, name: string, task: () => unknown, firstMs?: number): ScheduledTask;
  /**
   * Waits `ms`, or less when `wake()` is called or the scheduler stops: a loop's pause that
   * new work (or shutdown) cuts short.
   */
  pause(ms: number): Promise<void>;
  /** Ends every current `pause` now. */
  wake(): void;
  /** Timers waiting to fire now (for tests and `/health`). */
  readonly pendingCount: number;
  readonly stopped: boolean;
  /** Cancels every pending timer and pause, then waits for the runs in progress to settle. */
  stop(): Promise<void>;
}

const DEAD: ScheduledTask = { cancel() {} };

export function createScheduler(options: { onError?: (name: string, error: unknown) => void } = {}): Scheduler {
  const timers = new Map<ReturnType<typeof setTimeout>, string>();
  const running = new Set<Promise<void>>();
  const pauses = new Set<() => void>();
  let stopped = false;

  function arm(ms: number, name: string, fire: () => void): () => void {
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        if (!stopped) fire();
      },
      Math.max(0, ms),
    );
    (timer as { unref?: () => void }).unref?.();
    timers.set(timer, name);
    return () => {
      clearTimeout(timer);
      timers.delete(timer);
    };
  }

  function run(name: string, task: () => unknown): Promise<void> {
    const settled = (async () => {
      try {
        await task();
      } catch (error) {
        options.onError?.(name, error);
      }
    })();
    running.add(settled);
    void settled.finally(() => running.delete(settled));
    return settled;
  }

  return {
    after(ms, name, task) {
      if (stopped) return DEAD;
      const disarm = arm(ms, name, () => void run(name, task));
      return { cancel: disarm };
    },

    every(ms, name, task, firstMs = ms) {
      if (stopped) return DEAD;
      let cancelled = false;
      let disarm = () => {};
      const next = (delay: number) => {
        if (cancelled || stopped) return;
        disarm = arm(delay, name, () => void run(name, task).then(() => next(ms)));
      };
      next(firstMs);
      return {
        cancel() {
          cancelled = true;
          disarm();
        },
      };
    },

    pause(ms) {
      if (stopped) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = () => {
          pauses.delete(done);
          disarm();
          resolve();
        };
        const disarm = arm(ms, "pause", done);
        pauses.add(done);
      });
    },

    wake() {
      for (const done of [...pauses]) done();
    },

    get pendingCount() {
      return timers.size;
    },

    get stopped() {
      return stopped;
    },

    async stop() {
      stopped = true;
      for (const timer of timers.keys()) clearTimeout(timer);
      timers.clear();
      for (const done of [...pauses]) done();
      while (running.size) await Promise.allSettled([...running]);
    },
  };
}
