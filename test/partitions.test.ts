import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { textTable } from "../src/search/lance/partitions";
import { killSpawnedServers, runCli, spawnServer } from "./helpers/cli";
import { dropDatabaseFor } from "./helpers/database";
import { duplicates, indexRows, indexTables, waitForIndex } from "./helpers/index-rows";
import { mock, startTestServer, tempDir, type TestServer } from "./helpers/server";

afterEach(killSpawnedServers);

/** One user's memories: distinct sentences sharing words, so that BM25 statistics matter. */
const SOLO = [
  "the red kayak is stored in the boathouse",
  "paddles for the kayak hang by the door",
  "the boathouse roof leaks when it rains",
  "rain gear is in the blue locker",
  "the locker key is under the red stone",
  "a kayak trip down the river on sunday",
];
/** Other users write the same words much more often, which would skew shared statistics. */
const NOISE = Array.from(
  { length: 60 },
  (_, i) => `kayak kayak river notes ${i} about the red boathouse and the kayak club`,
);
const QUERIES = ["kayak", "red boathouse", "rain locker", "river trip", "key under stone"];

async function ranked(server: TestServer, user: string) {
  const out: Array<Array<[string, number]>> = [];
  for (const query of QUERIES) {
    const [status, body] = await server.call("POST", "/v1/memories/search", {
      token: mock(user),
      body: { query, limit: 10 },
    });
    expect(status).toBe(200);
    // Equal scores are ordered by recency, which two servers cannot share to the
    // millisecond: within a tie, compare as a set.
    const list: Array<[string, number]> = body.results.map((r: { id: string; score: number }) => [r.id, r.score]);
    out.push(list.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
  }
  return out;
}

async function writeSolo(server: TestServer) {
  for (const [i, content] of SOLO.entries()) {
    expect(
      (await server.call("POST", "/v1/memories", { token: mock("solo"), body: { id: `solo-${i}`, content } }))[0],
    ).toBe(201);
  }
}

const servers: TestServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.destroy();
});

describe("a user's index partition", () => {
  test("rankings (ids, order, scores) are identical whether the user is alone or beside other users", async () => {
    const alone = await startTestServer();
    const shared = await startTestServer();
    servers.push(alone, shared);
    await writeSolo(alone);
    // Beside others: before, between and after the user's own writes.
    for (const [i, content] of NOISE.entries())
      await shared.call("POST", "/v1/memories", { token: mock(`other-${i % 5}`), body: { content } });
    await writeSolo(shared);
    for (const [i, content] of NOISE.entries())
      await shared.call("POST", "/v1/memories", {
        token: mock(`late-${i % 3}`),
        body: { content: `${content} again` },
      });

    const expected = await ranked(alone, "solo");
    expect(expected.flat().length).toBeGreaterThan(QUERIES.length);
    expect(await ranked(shared, "solo")).toEqual(expected);
    // And they stay identical once the index is compacted (statistics folded into the indices).
    await alone.services.indexer.settle();
    await shared.services.indexer.settle();
    expect(await ranked(shared, "solo")).toEqual(await ranked(alone, "solo"));
  }, 60_000);

  test("each partition table holds one owner's rows only, and no user reaches another's", async () => {
    const server = await startTestServer();
    servers.push(server);
    await server.call("POST", "/v1/memories", { token: mock("ann"), body: { content: "ann keeps the harbour keys" } });
    await server.call("POST", "/v1/memories", { token: mock("bob"), body: { content: "bob keeps the harbour maps" } });
    const [, bobSearch] = await server.call("POST", "/v1/memories/search", {
      token: mock("bob"),
      body: { query: "harbour keys" },
    });
    expect(bobSearch.results.map((r: { content: string }) => r.content)).toEqual(["bob keeps the harbour maps"]);
    await server.services.indexer.drain();
    const rows = await indexRows(server.dataDir);
    const owners = new Map<string, Set<string>>();
    for (const row of rows) owners.set(row.table, (owners.get(row.table) ?? new Set()).add(row.owner_id));
    expect([...owners.values()].every((set) => set.size === 1)).toBe(true);
    expect(owners.get(textTable("ann", "mem"))).toEqual(new Set(["ann"]));
    expect(owners.get(textTable("bob", "mem"))).toEqual(new Set(["bob"]));
  });

  test("is created on the first write, survives a crash and a reindex, and is gone with the user's last memory", async () => {
    const dir = tempDir("mnemo-partitions-");
    const args = ["--data", dir, "--allow-mock-tokens"];
    const headers = (user: string) => ({
      authorization: `Bearer mock-token-${user}`,
      "content-type": "application/json",
    });
    const post = (url: string, user: string, path: string, body: unknown) =>
      fetch(url + path, { method: "POST", headers: headers(user), body: JSON.stringify(body) }).then(
        (r) => r.json() as Promise<any>,
      );

    const first = await spawnServer(args);
    await post(first.url, "warm", "/v1/memories", { content: "someone else" });
    await post(first.url, "warm", "/v1/memories/search", { query: "someone" });
    const ownTable = textTable("lazy", "mem");
    expect(await indexTables(dir)).not.toContain(ownTable);
    const written = await post(first.url, "lazy", "/v1/memories", { content: "the gate code is 4711" });
    expect((await post(first.url, "lazy", "/v1/memories/search", { query: "gate code" })).results).toHaveLength(1);
    await waitForIndex(first.url);
    expect(await indexTables(dir)).toContain(ownTable);
    first.proc.kill("SIGKILL");
    await first.proc.exited;

    const second = await spawnServer(args);
    expect(
      (await post(second.url, "lazy", "/v1/memories/search", { query: "gate code" })).results.map((r: any) => r.id),
    ).toEqual([written.id]);
    second.proc.kill("SIGTERM");
    await second.proc.exited;
    const reindexed = await runCli(["reindex", "--data", dir]);
    expect(reindexed.exitCode).toBe(0);
    expect(duplicates(await indexRows(dir))).toEqual([]);

    const third = await spawnServer(args);
    expect(
      (await post(third.url, "lazy", "/v1/memories/search", { query: "gate code" })).results.map((r: any) => r.id),
    ).toEqual([written.id]);
    const removed = await fetch(`${third.url}/v1/memories/${written.id}`, {
      method: "DELETE",
      headers: headers("lazy"),
    });
    expect(removed.status).toBe(200);
    expect((await post(third.url, "lazy", "/v1/memories/search", { query: "gate code" })).results).toEqual([]);
    await waitForIndex(third.url);
    third.proc.kill("SIGTERM");
    await third.proc.exited;
    expect(await indexTables(dir)).not.toContain(ownTable);
    expect((await indexRows(dir)).filter((r) => r.owner_id === "lazy")).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
    await dropDatabaseFor(dir);
  }, 60_000);
});

describe("open index tables", () => {
  test("stay within MNEMO_INDEX_OPEN_TABLES however many users search, and every search still answers", async () => {
    const server = await startTestServer({ env: { MNEMO_INDEX_OPEN_TABLES: "3" } });
    servers.push(server);
    const users = Array.from({ length: 8 }, (_, i) => `many-${i}`);
    for (const user of users)
      await server.call("POST", "/v1/memories", { token: mock(user), body: { content: `${user} waters the ferns` } });
    for (let round = 0; round < 2; round++) {
      for (const user of users) {
        const [, body] = await server.call("POST", "/v1/memories/search", {
          token: mock(user),
          body: { query: "ferns" },
        });
        expect(body.results.map((r: { content: string }) => r.content)).toEqual([`${user} waters the ferns`]);
        expect(server.services.search.internals.lance.openTableCount).toBeLessThanOrEqual(3);
      }
    }
  });

  test("searches that arrive together at a table not open yet share one open of it", async () => {
    const first = await startTestServer();
    const [status] = await first.call("POST", "/v1/memories", {
      token: mock("together"),
      body: { content: "the ferry leaves at noon" },
    });
    expect(status).toBe(201);
    await first.services.indexer.drain();
    await first.stop();
    // A restart on the same data: no table is open in it.
    const server = await startTestServer({ dataDir: first.dataDir });
    servers.push(server);
    const lance = server.services.search.internals.lance;
    const before = lance.tableOpens;
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        server.call("POST", "/v1/memories/search", { token: mock("together"), body: { query: "ferry" } }),
      ),
    );
    for (const [code, body] of answers) {
      expect(code).toBe(200);
      expect(body.results.map((r: { content: string }) => r.content)).toEqual(["the ferry leaves at noon"]);
    }
    expect(lance.tableOpens - before).toBe(1);
  });
});
