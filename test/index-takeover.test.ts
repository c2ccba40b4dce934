import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { textTable } from "../src/search/lance/partitions";
import { killSpawnedServers, spawnServer } from "./helpers/cli";
import { databaseUrlFor, dropDatabaseFor } from "./helpers/database";
import { fragmentCount, indexCaughtUp } from "./helpers/index-rows";
import { tempDir } from "./helpers/server";

const dirs: string[] = [];
afterEach(async () => {
  await killSpawnedServers();
  for (const dir of dirs.splice(0)) {
    rmSync(dir, { recursive: true, force: true });
    await dropDatabaseFor(dir);
  }
});

const headers = { authorization: "Bearer mock-token-regain", "content-type": "application/json" };
const create = (url: string, content: string) =>
  fetch(`${url}/v1/memories`, { method: "POST", headers, body: JSON.stringify({ content }) }).then(
    (r) => r.json() as Promise<{ id: string }>,
  );
const search = (url: string, query: string) =>
  fetch(`${url}/v1/memories/search`, { method: "POST", headers, body: JSON.stringify({ query, limit: 100 }) })
    .then((r) => r.json() as Promise<{ results: Array<{ id: string }> }>)
    .then((body) => body.results.map((m) => m.id));
const isWriter = (url: string) =>
  fetch(`${url}/health`, { headers }).then(async (r) => ((await r.json()) as any).index.writer as boolean);

async function until(what: string, probe: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await probe()) return;
    await Bun.sleep(50);
  }
  throw new Error(`gave up waiting for ${what}`);
}

/**
 * Takes the index lease from its holder, as happens when the holder stops renewing it
 * (paused, cut off): on the embedded store the lease row expires; on PostgreSQL the
 * connection holding the advisory lock is ended.
 */
async function lapseLease(dataDir: string): Promise<void> {
  const url = await databaseUrlFor(dataDir);
  if (!url) {
    const db = new Database(join(dataDir, "mnemo.sqlite"));
    db.exec("PRAGMA busy_timeout = 5000");
    db.exec("UPDATE leases SET expires_at = 0 WHERE name = 'indexer'");
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const ended = await client.query(
    `SELECT pg_terminate_backend(pid) FROM pg_locks
     WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  await client.end();
  expect(ended.rowCount).toBe(1);
}

// The lease is handed from one process to the other by pausing its holder (SIGSTOP) and
// taking the lease from it, so that the other process, and only it, takes over.
describe("a writer that loses the index lease and later takes it back", () => {
  test("forgets which tables it had left fully indexed: rows the writer in between added outside the full-text index are found", async () => {
    const dir = tempDir("mnemo-regain-");
    dirs.push(dir);
    const args = ["--data", dir, "--allow-mock-tokens"];
    const table = textTable("regain", "mem");
    // A compacts when idle; B never compacts, so what it adds stays outside the index.
    const a = await spawnServer(args, { MNEMO_INDEX_MAX_FRAGMENTS: "1000", MNEMO_INDEX_IDLE_OPTIMIZE_MS: "300" });
    await until("A to write the index", () => isWriter(a.url));
    const early: string[] = [];
    for (let i = 0; i < 3; i++) early.push((await create(a.url, `orchard ledger line ${i}`)).id);
    expect((await search(a.url, "orchard")).sort()).toEqual([...early].sort());
    await until("A to index them", () => indexCaughtUp(a.url));
    await until("A to compact the table", async () => (await fragmentCount(dir, table)) <= 2);
    // Fully indexed in A's eyes now: its searches skip the flat scan of unindexed rows.
    expect((await search(a.url, "orchard")).sort()).toEqual([...early].sort());

    const b = await spawnServer(args, { MNEMO_INDEX_MAX_FRAGMENTS: "1000", MNEMO_INDEX_IDLE_OPTIMIZE_MS: "600000" });
    a.proc.kill("SIGSTOP");
    await lapseLease(dir);
    await until("B to take the lease", () => isWriter(b.url));
    a.proc.kill("SIGCONT");
    await until("A to see it has lost the lease", async () => !(await isWriter(a.url)));

    const fragmentsBefore = await fragmentCount(dir, table);
    const later = (await create(b.url, "orchard quince planted by the gate")).id;
    expect(await search(b.url, "quince")).toEqual([later]);
    await until("B to index it", () => indexCaughtUp(b.url));
    // B added the row in a fragment of its own, outside the full-text index.
    expect(await fragmentCount(dir, table)).toBeGreaterThan(fragmentsBefore);

    b.proc.kill("SIGSTOP");
    await lapseLease(dir);
    await until("A to take the lease back", () => isWriter(a.url));
    expect(await search(a.url, "quince")).toEqual([later]);
    expect((await search(a.url, "orchard")).sort()).toEqual([...early, later].sort());
  }, 60_000);
});
