/**
 * What the process that takes over the index checks before it serves, made cheap so a
 * start does not grow with the index (docs/performance.md#many-users): a present index is
 * not rebuilt, an empty or missing one is (when the store holds records), the check that
 * every table reads runs in a child process of its own, and a failure record left by the
 * writer before is cleared.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createSettings } from "../src/db/leases";
import { createLogger } from "../src/lib/log";
import { INDEX_FAILURE_KEY } from "../src/search/indexing/write-failures";
import { dropDatabaseFor } from "./helpers/database";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";

const dirs: string[] = [];
const running: TestServer[] = [];
afterEach(async () => {
  for (const server of running.splice(0)) await server.stop();
  for (const dir of dirs.splice(0)) {
    rmSync(dir, { recursive: true, force: true });
    await dropDatabaseFor(dir);
  }
});

const settings = createSettings();

/** A server on `dataDir` whose info lines are kept. */
async function start(dataDir: string): Promise<{ server: TestServer; lines: string[] }> {
  const lines: string[] = [];
  const server = await startTestServer({
    dataDir,
    overrides: { logLevel: "info" },
    log: createLogger("info", (line) => lines.push(line)),
  });
  running.push(server);
  return { server, lines };
}

async function stop(server: TestServer): Promise<void> {
  running.splice(running.indexOf(server), 1);
  await server.stop();
}

const rebuilt = (lines: string[]) => lines.filter((line) => /rebuilding it/.test(line));

describe("the checks a new index writer makes before serving", () => {
  test("a present index is kept; an emptied index dir is rebuilt from the store of record", async () => {
    const dataDir = tempDir("mnemo-start-checks-");
    dirs.push(dataDir);
    const first = await start(dataDir);
    const [status, created] = await first.server.call("POST", "/v1/memories", {
      body: { content: "a heron by the lake" },
    });
    expect(status).toBe(201);
    await first.server.services.indexer.drain();
    await stop(first.server);

    const again = await start(dataDir);
    expect(rebuilt(again.lines)).toEqual([]);
    await stop(again.server);

    // The dir stays, its tables go: the index is missing all the same.
    const index = join(dataDir, "index");
    for (const entry of readdirSync(index)) rmSync(join(index, entry), { recursive: true, force: true });
    mkdirSync(index, { recursive: true });
    const healed = await start(dataDir);
    expect(rebuilt(healed.lines)).toEqual([expect.stringContaining("the search index is missing")]);
    const [, found] = await healed.server.call("POST", "/v1/memories/search", { body: { query: "heron" } });
    expect(found.results.map((r: { id: string }) => r.id)).toEqual([created.id]);
  });

  test("the check that every table reads runs in a child of its own, which takes no write after it", async () => {
    const dataDir = tempDir("mnemo-start-checks-");
    dirs.push(dataDir);
    const first = await start(dataDir);
    for (const user of ["ann", "ben", "cy"])
      await first.server.call("POST", "/v1/memories", {
        token: `mock-token-${user}`,
        body: { content: `${user} rows` },
      });
    await first.server.services.indexer.drain();
    await stop(first.server);

    const next = await start(dataDir);
    const lance = next.server.services.search.internals.lance;
    // The check runs beside serving, before the writer's first batch: once this write is
    // indexed, it has run.
    await next.server.call("POST", "/v1/memories", { token: "mock-token-dee", body: { content: "dee rows" } });
    await next.server.services.indexer.drain();
    // One child checked the tables (LanceDB's memory for each table it opened goes with it),
    // another wrote.
    expect(lance.writerChildrenStarted).toBe(2);
    const [, found] = await next.server.call("POST", "/v1/memories/search", {
      token: "mock-token-ann",
      body: { query: "rows" },
    });
    expect(found.results.map((r: { content: string }) => r.content)).toEqual(["ann rows"]);
  });

  test("a failure record left by the writer before is cleared when a new one takes over", async () => {
    const dataDir = tempDir("mnemo-start-checks-");
    dirs.push(dataDir);
    const first = await start(dataDir);
    const record = {
      since: new Date().toISOString(),
      lastAt: new Date().toISOString(),
      reason: "disk gone",
      failures: 3,
    };
    await settings.set(first.server.services.store.db, INDEX_FAILURE_KEY, JSON.stringify(record));
    await stop(first.server);

    const next = await start(dataDir);
    expect(await settings.get(next.server.services.store.db, INDEX_FAILURE_KEY)).toBe("");
    const [, health] = await next.server.call("GET", "/health");
    expect(health.index).toEqual(expect.objectContaining({ status: "ok", lastError: null, failingSince: null }));
  });
});
