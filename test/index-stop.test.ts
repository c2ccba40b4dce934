import { expect, test } from "bun:test";
import { mock, startTestServer } from "./helpers/server";

/** LanceStore's methods that write the index. */
const WRITES = ["replaceItems", "replaceVectors", "optimize", "createVectorIndex", "dropTable", "dropAll", "recycleConnectionAfter"] as const;

test("stopped in the middle of an ingest, the index writer cancels its timers before it drains: none is left, and nothing is written to the index, after stop", async () => {
  const server = await startTestServer();
  const token = mock("ingest");
  const { indexer, lance } = server.services.search.internals;
  try {
    let writing = true;
    const client = async (c: number) => {
      for (let i = 0; writing; i++) {
        const [status] = await server.call("POST", "/v1/memories", { token, body: { content: `harbour log ${c}-${i}: the tide turned at dawn` } });
        expect(status).toBe(201);
      }
    };
    const clients = [0, 1, 2, 3].map(client);
    // In the middle of the ingest: the writer has indexed batches and more changes wait.
    const midIngest = async () => {
      const stats = await server.services.indexer.stats();
      return stats.lastIndexedAt !== null && stats.pendingText > 0;
    };
    for (let i = 0; i < 500 && !(await midIngest()); i++) await Bun.sleep(10);
    expect(await midIngest()).toBe(true);

    let stopped = false;
    const writesAfterStop: string[] = [];
    for (const method of WRITES) {
      const original = (lance[method] as (...args: unknown[]) => Promise<unknown>).bind(lance);
      Object.assign(lance, { [method]: (...args: unknown[]) => (stopped && writesAfterStop.push(method), original(...args)) });
    }
    // The clients stop writing as the writer stops (as a server's HTTP side stops first).
    const stopping = server.services.indexer.stop();
    writing = false;
    await Promise.all([stopping, ...clients]);
    stopped = true;
    expect(indexer.pendingTimers).toBe(0);

    // Changes made after stop are acknowledged and queued, and stay queued.
    const pendingAtStop = (await server.services.indexer.stats()).pendingText;
    await Promise.all([0, 1, 2, 3].map(async (c) => {
      for (let i = 0; i < 10; i++) {
        expect((await server.call("POST", "/v1/memories", { token, body: { content: `after stop ${c}-${i}` } }))[0]).toBe(201);
      }
    }));
    expect({ pendingTimers: indexer.pendingTimers, writesAfterStop, pending: (await server.services.indexer.stats()).pendingText })
      .toEqual({ pendingTimers: 0, writesAfterStop: [], pending: pendingAtStop + 40 });
  } finally {
    await server.destroy();
  }
  expect([server.services.scheduler.stopped, server.services.scheduler.pendingCount]).toEqual([true, 0]);
});
