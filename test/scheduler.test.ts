import { describe, expect, test } from "bun:test";
import { createScheduler } from "../src/lib/scheduler";

/** Resolves after every timer already due at 0 ms has fired (timers fire in creation order). */
const afterDueTimers = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

describe("the scheduler", () => {
  test("runs a task once after its delay, and every task until cancelled, never overlapping itself", async () => {
    const scheduler = createScheduler();
    const once = Promise.withResolvers<string>();
    scheduler.after(0, "once", () => once.resolve("ran"));
    expect(await once.promise).toBe("ran");

    let active = 0;
    let overlapped = false;
    let runs = 0;
    const threeRuns = Promise.withResolvers<void>();
    const gate = Promise.withResolvers<void>();
    const repeating = scheduler.every(0, "repeat", async () => {
      if (++active > 1) overlapped = true;
      runs++;
      if (runs === 1) await gate.promise;
      active--;
      if (runs === 3) threeRuns.resolve();
    });
    // The first run waits on the gate: while it does, no second run may start.
    await afterDueTimers();
    await afterDueTimers();
    expect(runs).toBe(1);
    gate.resolve();
    await threeRuns.promise;
    repeating.cancel();
    expect(overlapped).toBe(false);
    await scheduler.stop();
  });

  test("stop cancels every pending timer before it drains: nothing fires or is scheduled after it", async () => {
    const errors: string[] = [];
    const scheduler = createScheduler({ onError: (name) => errors.push(name) });
    const fired: string[] = [];
    scheduler.after(0, "pending", () => fired.push("pending"));
    scheduler.every(0, "repeating", () => fired.push("repeating"), 0);
    const started = Promise.withResolvers<void>();
    const finish = Promise.withResolvers<void>();
    // A run in progress that tries to schedule more work while the scheduler stops.
    scheduler.after(0, "long", async () => {
      started.resolve();
      await finish.promise;
      scheduler.after(0, "late", () => fired.push("late"));
      fired.push("long done");
    });
    await started.promise;
    fired.length = 0;
    expect(scheduler.pendingCount).toBeGreaterThan(0);
    const stopping = scheduler.stop();
    expect([scheduler.stopped, scheduler.pendingCount]).toEqual([true, 0]);
    let drained = false;
    void stopping.then(() => (drained = true));
    await afterDueTimers();
    // stop waits for the run in progress.
    expect(drained).toBe(false);
    finish.resolve();
    await stopping;
    await afterDueTimers();
    expect({ fired, pending: scheduler.pendingCount, errors }).toEqual({
      fired: ["long done"],
      pending: 0,
      errors: [],
    });
    // After stop, scheduling is a no-op.
    scheduler.after(0, "after stop", () => fired.push("after stop"));
    scheduler.every(0, "after stop", () => fired.push("after stop"));
    await afterDueTimers();
    expect([fired, scheduler.pendingCount]).toEqual([["long done"], 0]);
  });

  test("a pause ends at its time, on wake, or when the scheduler stops; a task's error goes to onError", async () => {
    const errors: Array<[string, string]> = [];
    const scheduler = createScheduler({ onError: (name, error) => errors.push([name, (error as Error).message]) });
    await scheduler.pause(0);
    const woken = scheduler.pause(60_000);
    scheduler.wake();
    await woken;
    const failed = Promise.withResolvers<void>();
    scheduler.after(0, "failing", () => {
      failed.resolve();
      throw new Error("boom");
    });
    await failed.promise;
    await afterDueTimers();
    expect(errors).toEqual([["failing", "boom"]]);
    const cut = scheduler.pause(60_000);
    await scheduler.stop();
    await cut;
    await scheduler.pause(60_000);
    expect(scheduler.pendingCount).toBe(0);
  });
});
