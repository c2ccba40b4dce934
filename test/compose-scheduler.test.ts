import { describe, expect, test } from "bun:test";
import { scheduleOrphanSweep } from "../src/files/orphan-sweep";
import type { FileService } from "../src/files/service";
import { createLogger } from "../src/lib/log";
import { createScheduler } from "../src/lib/scheduler";
import { createSessionRegistry } from "../src/mcp/sessions";
import { startTestServer } from "./helpers/server";

/** Resolves after every timer already due at 0 ms has fired. */
const afterDueTimers = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

describe("background work runs on the one scheduler", () => {
  test("the orphan sweep is a task of the scheduler it is given: stopping the scheduler ends it", async () => {
    const scheduler = createScheduler();
    let sweeps = 0;
    const swept = Promise.withResolvers<void>();
    const files = {
      sweepOrphanBlobs: async () => {
        if (++sweeps === 2) swept.resolve();
        return [];
      },
    } as unknown as FileService;
    scheduleOrphanSweep({
      files,
      isSweeper: () => true,
      log: createLogger("error"),
      scheduler,
      everyMs: 1,
      minAgeMs: 0,
    });
    expect(scheduler.pendingCount).toBe(1);
    await swept.promise;
    await scheduler.stop();
    const after = sweeps;
    await afterDueTimers();
    await afterDueTimers();
    expect([sweeps, scheduler.pendingCount]).toEqual([after, 0]);
    // A sweep interval of 0 schedules nothing.
    const idle = createScheduler();
    scheduleOrphanSweep({
      files,
      isSweeper: () => true,
      log: createLogger("error"),
      scheduler: idle,
      everyMs: 0,
      minAgeMs: 0,
    });
    expect(idle.pendingCount).toBe(0);
  });

  test("the MCP session sweeper is a task of the scheduler it is given, only while sessions are open", async () => {
    const scheduler = createScheduler();
    const registry = createSessionRegistry({ maxPerUser: 2, maxTotal: 10, idleMs: 60_000 }, Date.now, scheduler);
    const session = (id: string) => ({
      id,
      userId: "alice",
      transport: {} as never,
      server: { close: async () => {} } as never,
    });
    await registry.add(session("s1"));
    expect([registry.sweeping, scheduler.pendingCount]).toEqual([true, 1]);
    registry.forget("s1");
    expect([registry.sweeping, scheduler.pendingCount]).toEqual([false, 0]);
    await registry.add(session("s2"));
    await registry.close();
    expect([registry.sweeping, scheduler.pendingCount]).toEqual([false, 0]);
  });

  test("closing the services stops their scheduler: nothing is scheduled after", async () => {
    const server = await startTestServer({ env: { MNEMO_BLOB_SWEEP_MS: "3600000" } });
    const { scheduler } = server.services;
    expect(scheduler.stopped).toBe(false);
    await server.destroy();
    expect([scheduler.stopped, scheduler.pendingCount]).toEqual([true, 0]);
    let ran = false;
    scheduler.after(0, "after close", () => (ran = true));
    await afterDueTimers();
    expect([ran, scheduler.pendingCount]).toEqual([false, 0]);
  });
});
