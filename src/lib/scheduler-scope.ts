import type { ScheduledTask, Scheduler } from "./scheduler";

const DEAD: ScheduledTask = { cancel() {} };

/**
 * One owner's part of the app's scheduler (the index writer's, say): its timers run on
 * the shared scheduler, and its own `stop()` cancels them, ends its pauses and waits for
 * its runs in progress, while the rest of the scheduler runs on. Once stopped (or once the
 * scheduler itself stops) it schedules nothing: `after` and `every` return a dead handle
 * and `pause` resolves at once. `wake()` ends this scope's pauses only.
 */
export function scopeOf(parent: Scheduler): Scheduler {
  const armed = new Set<ScheduledTask>();
  const pauses = new Set<() => void>();
  const running = new Set<Promise<void>>();
  let stopped = false;
  const closed = () => stopped || parent.stopped;

  /** Runs a task as this scope's, so that `stop()` waits for it; errors go on to the scheduler's `onError`. */
  function tracked(task: () => unknown): () => Promise<void> {
    return () => {
      const run = (async () => void (await task()))();
      const settled = run.then(
        () => {},
        () => {},
      );
      running.add(settled);
      void settled.then(() => running.delete(settled));
      return run;
    };
  }

  return {
    after(ms, name, task) {
      if (closed()) return DEAD;
      const run = tracked(task);
      const handle: ScheduledTask = parent.after(ms, name, () => {
        armed.delete(handle);
        return run();
      });
      armed.add(handle);
      return {
        cancel() {
          armed.delete(handle);
          handle.cancel();
        },
      };
    },

    every(ms, name, task, firstMs) {
      if (closed()) return DEAD;
      const handle = parent.every(ms, name, tracked(task), firstMs);
      armed.add(handle);
      return {
        cancel() {
          armed.delete(handle);
          handle.cancel();
        },
      };
    },

    pause(ms) {
      if (closed()) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = () => {
          pauses.delete(done);
          resolve();
        };
        pauses.add(done);
        // The scheduler's own pause ends at the time, or when the scheduler stops or wakes.
        // Ended early here, it still fires at its time (resolving nothing): pauses are short.
        void parent.pause(ms).then(done);
      });
    },

    wake() {
      for (const done of [...pauses]) done();
    },

    /** This scope's timers waiting to fire (a repeating one counts once) and its pauses. */
    get pendingCount() {
      // A stopped scheduler cleared every timer, this scope's with them.
      return parent.stopped ? 0 : armed.size + pauses.size;
    },

    get stopped() {
      return closed();
    },

    async stop() {
      stopped = true;
      for (const handle of [...armed]) handle.cancel();
      armed.clear();
      for (const done of [...pauses]) done();
      while (running.size) await Promise.all([...running]);
    },
  };
}
