import { describe, expect, test } from "bun:test";
import { createScheduler } from "../src/lib/scheduler";
import { scopeOf } from "../src/lib/scheduler-scope";

/** Resolves after every timer already due at 0 ms has fired (timers fire in creation order). */
const afterDueTimers = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

describe("a scope of the scheduler", () => {
  test("its stop cancels its own timers and pauses before it drains, refuses new ones, and leaves the rest of the scheduler running", async () => {
    const errors: string[] = [];
    const scheduler = createScheduler({ onError: (name) => errors.push(name) });
    const scope = scopeOf(scheduler);
    const fired: string[] = [];
    let otherRuns = 0;
    scheduler.every(0, "another owner's", () => void otherRuns++);
    scope.after(60_000, "pending", () => fired.push("pending"));
    scope.every(60_000, "repeating", () => fired.push("repeating"));
    const paused = scope.pause(60_000);
    const started = Promise.withResolvers<void>();
    const finish = Promise.withResolvers<void>();
    // A run in progress that tries to schedule more work while the scope stops.
    scope.after(0, "long", async () => {
      started.resolve();
      await finish.promise;
      scope.after(0, "late", () => fired.push("late"));
      fired.push("long done");
    });
    await started.promise;
    expect(scope.pendingCount).toBe(3);
    const stopping = scope.stop();
    expect([scope.stopped, scope.pendingCount]).toEqual([true, 0]);
    await paused;
    let drained = false;
    void stopping.then(() => (drained = true));
    await afterDueTimers();
    // stop waits for the run in progress.
    expect(drained).toBe(false);
    finish.resolve();
    await stopping;
    scope.after(0, "after stop", () => fired.push("after stop"));
    scope.every(0, "after stop", () => fired.push("after stop"));
    await scope.pause(60_000);
    await afterDueTimers();
    expect({ fired, pending: scope.pendingCount, errors }).toEqual({ fired: ["long done"], pending: 0, errors: [] });
    // The other owner's timer runs on.
    const runsAtStop = otherRuns;
    for (let i = 0; i < 100 && otherRuns === runsAtStop; i++) await afterDueTimers();
    expect([scheduler.stopped, otherRuns > runsAtStop]).toEqual([false, true]);
    await scheduler.stop();
  });

  test("wake ends its own pauses only; the scheduler's stop stops it too; a task's error goes to the scheduler's onError", async () => {
    const errors: Array<[string, string]> = [];
    const scheduler = createScheduler({ onError: (name, error) => errors.push([name, (error as Error).message]) });
    const scope = scopeOf(scheduler);
    let outsideEnded = false;
    const outside = scheduler.pause(60_000).then(() => (outsideEnded = true));
    const inside = scope.pause(60_000);
    scope.wake();
    await inside;
    await afterDueTimers();
    expect(outsideEnded).toBe(false);
    const failed = Promise.withResolvers<void>();
    scope.after(0, "failing", () => {
      failed.resolve();
      throw new Error("boom");
    });
    await failed.promise;
    await afterDueTimers();
    expect(errors).toEqual([["failing", "boom"]]);
    scope.every(60_000, "repeating", () => {});
    const cut = scope.pause(60_000);
    await scheduler.stop();
    await Promise.all([cut, outside]);
    expect([scope.stopped, scope.pendingCount]).toEqual([true, 0]);
    scope.after(0, "after stop", () => errors.push(["after stop", ""]));
    await afterDueTimers();
    expect(errors).toEqual([["failing", "boom"]]);
  });
});
