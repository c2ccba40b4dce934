import { expect, test } from "bun:test";
import { mock, startTestServer, type TestServer } from "./helpers/server";
import { waitFor } from "./helpers/wait";

/** LanceStore's methods that write the index. */
const WRITES = [
  "replaceItems",
  "replaceVectors",
  "optimize",
  "createVectorIndex",
  "dropTable",
  "dropAll",
  "recycleConnectionAfter",
] as const;

const token = mock("ingest");

/** Four clients writing memories until `writing.stop()`; `ingesting` resolves once the writer is in the middle of it (batches indexed, more waiting). */
function ingest(server: TestServer) {
  let writing = true;
  const client = async (c: number) => {
    for (let i = 0; writing; i++) {
      const [status] = await server.call("POST", "/v1/memories", {
        token,
        body: { content: `harbour log ${c}-${i}: the tide turned at dawn` },
      });
      expect(status).toBe(201);
    }
  };
  const clients = [0, 1, 2, 3].map(client);
  const midIngest = async () => {
    const stats = await server.services.indexer.stats();
    return stats.lastIndexedAt !== null && stats.pendingText > 0;
  };
  return {
    async ingesting() {
      await waitFor(midIngest, {
        what: "the index writer to be mid-ingest (something indexed, more pending)",
        everyMs: 10,
      });
    },
    async stop() {
      writing = false;
      await Promise.all(clients);
    },
  };
}

/** Records the LanceDB writes made once `from()` is called. */
function watchWrites(server: TestServer) {
  const { lance } = server.services.search.internals;
  let stopped = false;
  const writes: string[] = [];
  for (const method of WRITES) {
    const original = (lance[method] as (...args: unknown[]) => Promise<unknown>).bind(lance);
    Object.assign(lance, {
      [method]: (...args: unknown[]) => {
        if (stopped) writes.push(method);
        return original(...args);
      },
    });
  }
  return {
    from: () => {
      stopped = true;
    },
    writes,
  };
}

/** `count` memories written one after another. */
async function remember(server: TestServer, count: number, label: string) {
  for (let i = 0; i < count; i++)
    expect((await server.call("POST", "/v1/memories", { token, body: { content: `${label} ${i}` } }))[0]).toBe(201);
}

const pendingText = async (server: TestServer) => (await server.services.indexer.stats()).pendingText;

test("stopped in the middle of an ingest, the index writer cancels its timers before it drains: none is left, and nothing is written to the index, after stop", async () => {
  const server = await startTestServer();
  const { indexer } = server.services.search.internals;
  try {
    const clients = ingest(server);
    await clients.ingesting();
    const watch = watchWrites(server);
    // The clients stop while the writer stops (as a server's HTTP side stops first).
    await Promise.all([server.services.indexer.stop(), clients.stop()]);
    watch.from();
    const timersAtStop = indexer.pendingTimers;
    // Changes made after stop are acknowledged and queued, and stay queued.
    const before = await pendingText(server);
    await remember(server, 40, "after stop");
    expect({
      timersAtStop,
      timersNow: indexer.pendingTimers,
      writesAfterStop: watch.writes,
      queued: (await pendingText(server)) - before,
    }).toEqual({ timersAtStop: 0, timersNow: 0, writesAfterStop: [], queued: 40 });
  } finally {
    await server.destroy();
  }
  expect([server.services.scheduler.stopped, server.services.scheduler.pendingCount]).toEqual([true, 0]);
});

test("with the app's scheduler stopped first (a shutdown cancelling every owner's timers), the writer stops writing, and its stop still drains the text stage", async () => {
  const server = await startTestServer();
  const { indexer } = server.services.search.internals;
  try {
    const clients = ingest(server);
    await clients.ingesting();
    await server.services.scheduler.stop();
    await clients.stop();
    expect(server.services.indexer.isWriter).toBe(false);
    // Written once the scheduler stopped: no batch takes them until the writer's stop drains.
    await remember(server, 10, "during shutdown");
    const waiting = await pendingText(server);
    const watch = watchWrites(server);
    await server.services.indexer.stop();
    watch.from();
    await remember(server, 10, "after stop");
    expect({
      waitingAtStop: waiting >= 10,
      timers: indexer.pendingTimers,
      writesAfterStop: watch.writes,
      pending: await pendingText(server),
    }).toEqual({ waitingAtStop: true, timers: 0, writesAfterStop: [], pending: 10 });
  } finally {
    await server.destroy();
  }
});
