import { afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { killSpawnedServers, spawnServer } from "./helpers/cli";
import { dropDatabaseFor, TEST_DATABASE_URL } from "./helpers/database";
import { duplicates, indexRows } from "./helpers/index-rows";
import { tempDir } from "./helpers/server";
import { waitFor } from "./helpers/wait";

afterEach(killSpawnedServers);

const headers = { authorization: "Bearer mock-token-rep", "content-type": "application/json" };
const create = (url: string, content: string) =>
  fetch(`${url}/v1/memories`, { method: "POST", headers, body: JSON.stringify({ content }) }).then(async (r) => ({
    status: r.status,
    body: (await r.json()) as any,
  }));
const search = (url: string, query: string) =>
  // Full text alone: these tests count which writes the index and the store hold, not the word vectors' neighbours.
  fetch(`${url}/v1/memories/search`, {
    method: "POST",
    headers,
    body: JSON.stringify({ query, limit: 100, signals: ["text"] }),
  }).then(async (r) => ({
    lag: r.headers.get("x-svc-index-lag"),
    ids: ((await r.json()) as any).results.map((m: { id: string }) => m.id) as string[],
  }));
const health = (url: string) => fetch(`${url}/health`, { headers }).then((r) => r.json() as Promise<any>);

const until = <T>(what: string, probe: () => Promise<T>) => waitFor(probe, { what, everyMs: 100 });

const backend = TEST_DATABASE_URL ? "PostgreSQL" : "the embedded store";

describe(`two replicas on ${backend} and one shared index`, () => {
  test("one writes the index; each finds the other's writes; a killed writer is replaced and the index catches up without duplicates", async () => {
    const dir = tempDir("mnemo-replicas-");
    const args = ["--data", dir, "--allow-mock-tokens"];
    const a = await spawnServer(args);
    const b = await spawnServer(args);

    // Exactly one writer, and both agree which.
    const [ha, hb] = await until("a writer", async () => {
      const both = [await health(a.url), await health(b.url)];
      return both.some((h) => h.index.writer) ? both : null;
    });
    expect([ha.index.writer, hb.index.writer].filter(Boolean)).toHaveLength(1);
    expect(ha.index.writerId).toBe(hb.index.writerId);
    expect(ha.store).toBe(TEST_DATABASE_URL ? "postgres" : "sqlite");

    // The first write of a new data dir creates the index tables and their full-text
    // indices (a few hundred ms, once); searches then wait only for batches.
    const warmUp = [(await create(a.url, "warm up")).body.id];
    await search(a.url, "warm");

    // Read-your-writes across replicas, both ways.
    const onA = await create(a.url, "the lighthouse keeper feeds the gulls");
    expect(onA.status).toBe(201);
    expect((await search(b.url, "lighthouse")).ids).toEqual([onA.body.id]);
    const onB = await create(b.url, "the ferry leaves at dawn for the lighthouse");
    expect(onB.status).toBe(201);
    expect((await search(a.url, "ferry")).ids).toEqual([onB.body.id]);

    // Kill the writer under writes; the survivor takes over and catches up.
    const [writer, survivor] = ha.index.writer ? [a, b] : [b, a];
    const written = [onA.body.id, onB.body.id];
    for (let i = 0; i < 20; i++) written.push((await create(writer.url, `harbour log entry ${i}`)).body.id);
    writer.proc.kill("SIGKILL");
    await writer.proc.exited;
    for (let i = 20; i < 30; i++) written.push((await create(survivor.url, `harbour log entry ${i}`)).body.id);
    await until("the survivor to write the index", async () => (await health(survivor.url)).index.writer);
    const found = await until("every write to be searchable", async () => {
      const result = await search(survivor.url, "harbour log entry");
      return result.ids.length === 30 ? result : null;
    });
    expect(new Set(found.ids).size).toBe(30);
    expect((await search(survivor.url, "lighthouse")).ids.sort()).toEqual([onA.body.id, onB.body.id].sort());

    // The index holds each memory exactly once.
    survivor.proc.kill("SIGTERM");
    await survivor.proc.exited;
    const rows = (await indexRows(dir)).filter((r) => r.owner_id === "rep");
    expect(duplicates(rows)).toEqual([]);
    expect(rows.map((r) => r.item_id).sort()).toEqual([...written, ...warmUp].sort());
    rmSync(dir, { recursive: true, force: true });
    await dropDatabaseFor(dir);
  }, 120_000);
});

describe(`a search on a replica while the index writer is stalled (${backend})`, () => {
  test("answers at once with the caller's own writes read from the store, X-Svc-Index-Lag counting them, and never a deleted memory's old hit", async () => {
    const dir = tempDir("mnemo-stall-");
    const args = ["--data", dir, "--allow-mock-tokens"];
    const writer = await spawnServer(args);
    await until("the writer", async () => (await health(writer.url)).index.writer);
    const reader = await spawnServer(args);
    await create(writer.url, "a warm hull");
    const kept = await create(reader.url, "the keel of the old boat");
    const doomed = await create(reader.url, "the keel must be painted");
    expect((await search(reader.url, "keel")).ids.sort()).toEqual([kept.body.id, doomed.body.id].sort());
    await until("the writer to index them", async () => (await health(writer.url)).index.pending === 0);

    writer.proc.kill("SIGSTOP");
    try {
      const del = await fetch(`${reader.url}/v1/memories/${doomed.body.id}`, { method: "DELETE", headers });
      expect(del.status).toBe(200);
      const fresh = await create(reader.url, "a new keel for the old boat");
      // The index still holds the deleted memory and lacks the new one: both changes are
      // pending, so the search reads them from the store: the new one found, the deleted gone.
      const stalled = await search(reader.url, "keel");
      expect(stalled.ids.sort()).toEqual([kept.body.id, fresh.body.id].sort());
      expect(stalled.lag).toBe("2");
      writer.proc.kill("SIGCONT");
      const caughtUp = await until("the index to catch up", async () => {
        const result = await search(reader.url, "keel");
        return result.lag === null ? result : null;
      });
      expect(caughtUp.ids.sort()).toEqual([kept.body.id, fresh.body.id].sort());
    } finally {
      writer.proc.kill("SIGCONT");
    }
    rmSync(dir, { recursive: true, force: true });
    await dropDatabaseFor(dir);
  }, 60_000);
});
