import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, lstatSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { run, sql } from "../src/db/store";
import { cliDataDirs, killSpawnedServers, runCli, spawnServer } from "./helpers/cli";
import { TEST_DATABASE_URL } from "./helpers/database";
import { startTestServer } from "./helpers/server";

/**
 * Everything Mnemo writes is its user's only (0700 directories, 0600
 * files: the data dir, SQLite and its WAL, LanceDB's index and blobs, the master key,
 * backups, exports), and a deleted memory's text does not stay readable in SQLite's pages.
 */
afterEach(killSpawnedServers);
const { root, dataDir } = cliDataDirs("mnemo-privacy-");

/** `path` and everything under it that is not owner-only, as `path mode` lines (empty when all are). */
function notOwnerOnly(path: string): string[] {
  const found: string[] = [];
  const walk = (at: string) => {
    let info: ReturnType<typeof lstatSync>;
    try {
      info = lstatSync(at);
    } catch {
      return; // removed meanwhile (a compaction)
    }
    const mode = info.mode & 0o777;
    if (info.isDirectory()) {
      if (mode !== 0o700) found.push(`${at} ${mode.toString(8)}`);
      for (const entry of readdirSync(at)) walk(join(at, entry));
    } else if (!info.isSymbolicLink() && mode !== 0o600) {
      found.push(`${at} ${mode.toString(8)}`);
    }
  };
  walk(path);
  return found;
}

/** Every file path under `path`. */
const filesUnder = (path: string): string[] =>
  readdirSync(path, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(path, entry.name)) : [join(path, entry.name)],
  );

const call = (url: string, method: string, path: string, body?: unknown) =>
  fetch(url + path, {
    method,
    headers: { authorization: "Bearer mock-token-alice", "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** A memory, a document and an uploaded file, then waits until the index has taken them in. */
async function writeEverything(url: string): Promise<string> {
  expect((await call(url, "POST", "/v1/memories", { content: "owner only memory" })).status).toBe(201);
  const ws = (await (await call(url, "POST", "/v1/workspaces", { name: "Private" })).json()) as { id: string };
  expect(
    (await call(url, "POST", "/v1/documents", { workspace_id: ws.id, title: "Doc", markdown: "owner only document" }))
      .status,
  ).toBe(201);
  const upload = (await (
    await call(url, "POST", `/v1/workspaces/${ws.id}/files/upload-url`, {
      filename: "a.txt",
      contentType: "text/plain",
    })
  ).json()) as { url: string };
  expect(
    (await fetch(upload.url, { method: "PUT", headers: { "content-type": "text/plain" }, body: "owner only file" }))
      .status,
  ).toBe(201);
  for (let i = 0; i < 400; i++) {
    const status = (await (await call(url, "GET", `/v1/workspaces/${ws.id}/index/status`)).json()) as {
      pending: { text: number };
    };
    const found = (await (await call(url, "POST", "/v1/memories/search", { query: "owner only memory" })).json()) as {
      results: unknown[];
    };
    if (status.pending.text === 0 && found.results.length > 0) return ws.id;
    await Bun.sleep(25);
  }
  throw new Error("the index did not catch up");
}

describe("owner-only files", () => {
  test("a data dir created by `mnemo serve` is owner-only, recursively: store, WAL, index, blobs, master key", async () => {
    const dir = dataDir("fresh");
    expect(existsSync(dir)).toBe(false);
    const server = await spawnServer(["--data", dir, "--allow-mock-tokens"]);
    await writeEverything(server.url);
    const names = readdirSync(dir);
    expect(names).toEqual(
      expect.arrayContaining(
        TEST_DATABASE_URL ? ["index", "blobs"] : ["index", "blobs", "master.key", "mnemo.sqlite", "mnemo.sqlite-wal"],
      ),
    );
    expect(filesUnder(join(dir, "index")).length).toBeGreaterThan(0);
    expect(filesUnder(join(dir, "blobs")).length).toBeGreaterThan(0);
    expect(notOwnerOnly(dir)).toEqual([]);
    server.proc.kill("SIGTERM");
    expect(await server.proc.exited).toBe(0);
    expect(notOwnerOnly(dir)).toEqual([]);
  });

  test("startServer makes a fresh data dir owner-only too (in-process, as the tests and embedders start it)", async () => {
    const dir = join(dataDir("in-process"), "nested", "data");
    const server = await startTestServer({ dataDir: dir });
    try {
      await writeEverything(server.url);
      expect(notOwnerOnly(dir)).toEqual([]);
    } finally {
      await server.destroy();
    }
  });

  test("a backup and an export are owner-only, even from a data dir whose files others could read", async () => {
    const dir = dataDir("old-modes");
    const server = await spawnServer(["--data", dir, "--allow-mock-tokens"]);
    await writeEverything(server.url);
    server.proc.kill("SIGTERM");
    await server.proc.exited;
    // As an earlier version left it: everything readable by others.
    expect(Bun.spawnSync(["chmod", "-R", "go+rX", dir]).exitCode).toBe(0);
    expect(statSync(dir).mode & 0o777).toBe(0o755);

    const out = join(root, "backup");
    const backup = await runCli(["backup", "--out", out, "--data", dir]);
    expect([backup.exitCode, backup.stderr]).toEqual([0, ""]);
    expect(filesUnder(out).length).toBeGreaterThan(TEST_DATABASE_URL ? 1 : 3);
    expect(notOwnerOnly(out)).toEqual([]);

    const exported = join(root, "alice.jsonl");
    const result = await runCli(["export", "--user", "alice", "--out", exported, "--data", dir]);
    expect([result.exitCode, readFileSync(exported, "utf8")]).toEqual([
      0,
      expect.stringContaining("owner only memory"),
    ]);
    expect((statSync(exported).mode & 0o777).toString(8)).toBe("600");

    if (!TEST_DATABASE_URL) {
      chmodSync(join(out, "mnemo.sqlite"), 0o644); // a backup made by an earlier version
      const target = dataDir("restored");
      const restored = await runCli(["restore", out, "--data", target]);
      expect(restored.exitCode).toBe(0);
      expect(notOwnerOnly(target)).toEqual([]);
    }
  });
});

describe.skipIf(Boolean(TEST_DATABASE_URL))("deleted text (SQLite secure_delete)", () => {
  test("after a memory is deleted and the WAL checkpointed, its text is in neither the database file nor the WAL", async () => {
    const dir = dataDir("secure-delete");
    const server = await startTestServer({ dataDir: dir });
    try {
      const marker = `zebrafinch${crypto.randomUUID().replaceAll("-", "")}`;
      const control = `kestrel${crypto.randomUUID().replaceAll("-", "")}`;
      const [, deleted] = await server.call("POST", "/v1/memories", { body: { content: `the secret is ${marker}` } });
      await server.call("POST", "/v1/memories", { body: { content: `kept: ${control}` } });
      expect((await server.call("DELETE", `/v1/memories/${deleted.id}`))[0]).toBe(200);
      const db = server.services.store.db;
      // The pages go home to the database file (nothing written after the delete reuses the freed space).
      await run(db, sql`PRAGMA wal_checkpoint(TRUNCATE)`);
      const bytes = [join(dir, "mnemo.sqlite"), join(dir, "mnemo.sqlite-wal")]
        .filter(existsSync)
        .map((path) => readFileSync(path).toString("latin1"))
        .join("");
      expect([bytes.includes(control), bytes.includes(marker)]).toEqual([true, false]);
    } finally {
      await server.destroy();
    }
  });
});
