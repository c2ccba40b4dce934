import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliDataDirs, killSpawnedServers, runCli, spawnServer } from "./helpers/cli";
import { TEST_DATABASE_URL } from "./helpers/database";

afterEach(killSpawnedServers);
const { root, dataDir } = cliDataDirs("mnemo-cli-backup-");

const post = (url: string, path: string, body: unknown) =>
  fetch(url + path, {
    method: "POST",
    headers: { authorization: "Bearer mock-token-alice", "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe.skipIf(Boolean(TEST_DATABASE_URL))("mnemo backup and restore (SQLite)", () => {
  test("a backup taken while the server writes restores into an empty data dir, searchable at once", async () => {
    const source = dataDir("live");
    const server = await spawnServer(["--data", source, "--allow-mock-tokens"]);
    for (let i = 0; i < 20; i++)
      expect((await post(server.url, "/v1/memories", { content: `heron sighting number ${i}` })).status).toBe(201);
    const ws = (await (await post(server.url, "/v1/workspaces", { name: "Files" })).json()) as { id: string };
    const upload = (await (
      await post(server.url, `/v1/workspaces/${ws.id}/files/upload-url`, {
        filename: "a.txt",
        contentType: "text/plain",
      })
    ).json()) as { url: string; key: string };
    expect(
      (await fetch(upload.url, { method: "PUT", headers: { "content-type": "text/plain" }, body: "kingfishers dive" }))
        .status,
    ).toBe(201);

    // Writes keep arriving while the backup runs.
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing)
        if ((await post(server.url, "/v1/memories", { content: `egret during backup ${written}` })).status === 201)
          written++;
    })();
    const out = join(root, "backup-1");
    const backup = await runCli(["backup", "--out", out, "--json", "--data", source]);
    writing = false;
    await writer;
    expect(backup.exitCode).toBe(0);
    expect(JSON.parse(backup.stdout).manifest).toEqual({
      format: "mnemo-backup",
      version: 1,
      createdAt: expect.any(String),
      store: "sqlite",
      database: "mnemo.sqlite",
      blobs: true,
      masterKey: true,
    });
    expect(written).toBeGreaterThan(0);
    server.proc.kill("SIGTERM");
    await server.proc.exited;

    const target = dataDir("restored");
    const restored = await runCli(["restore", out, "--data", target]);
    expect([restored.exitCode, restored.stdout]).toEqual([
      0,
      expect.stringContaining(`restored ${out} into ${target}; search index rebuilt`),
    ]);
    expect(readFileSync(join(target, "master.key"), "utf8")).toBe(readFileSync(join(source, "master.key"), "utf8"));
    const doctor = JSON.parse((await runCli(["doctor", "--json", "--data", target])).stdout);
    expect(doctor.checks.find((c: any) => c.name === "index lag").detail).toStartWith(
      "0 changes waiting for full-text",
    );

    const again = await spawnServer(["--data", target, "--allow-mock-tokens"]);
    const list = (await (
      await fetch(`${again.url}/v1/memories?limit=1000`, { headers: { authorization: "Bearer mock-token-alice" } })
    ).json()) as any;
    const herons = list.data.filter((m: any) => m.content.startsWith("heron"));
    expect(herons.length).toBe(20);
    expect(list.data.length).toBeLessThanOrEqual(20 + written);
    const found = (await (
      await post(again.url, "/v1/memories/search", { query: "heron sighting number 7" })
    ).json()) as any;
    expect(found.results[0].content).toBe("heron sighting number 7");
    const file = await fetch(`${again.url}/v1/workspaces/${ws.id}/files/${upload.key}`, {
      headers: { authorization: "Bearer mock-token-alice" },
    });
    expect([file.status, await file.text()]).toEqual([200, "kingfishers dive"]);
    const bob = (await (
      await fetch(`${again.url}/v1/memories`, { headers: { authorization: "Bearer mock-token-bob" } })
    ).json()) as any;
    expect(bob.data).toEqual([]);
  });

  test("never overwrites: a non-empty --out, a data dir with a store, or a folder that is no backup are refused", async () => {
    const source = dataDir("refusals");
    // Any command that opens the store creates it.
    expect((await runCli(["keys", "list", "--data", source])).exitCode).toBe(0);
    const full = join(root, "not-empty");
    mkdirSync(full, { recursive: true });
    writeFileSync(join(full, "x"), "x");
    const refused = await runCli(["backup", "--out", full, "--data", source]);
    expect([refused.exitCode, refused.stderr]).toEqual([1, expect.stringContaining("is not empty")]);
    const out = join(root, "backup-2");
    expect((await runCli(["backup", "--out", out, "--data", source])).exitCode).toBe(0);
    const onto = await runCli(["restore", out, "--data", source]);
    expect([onto.exitCode, onto.stderr]).toEqual([1, expect.stringContaining("already has a store of record")]);
    const bogus = await runCli(["restore", full, "--data", dataDir("bogus")]);
    expect([bogus.exitCode, bogus.stderr]).toEqual([1, expect.stringContaining("not a Mnemo backup")]);
  });
});

describe.skipIf(!TEST_DATABASE_URL)("mnemo backup and restore (PostgreSQL)", () => {
  test("copies the blobs and prints the pg_dump and pg_restore commands", async () => {
    const source = dataDir("pg");
    const server = await spawnServer(["--data", source, "--allow-mock-tokens"]);
    const ws = (await (await post(server.url, "/v1/workspaces", { name: "Files" })).json()) as { id: string };
    const upload = (await (
      await post(server.url, `/v1/workspaces/${ws.id}/files/upload-url`, {
        filename: "a.txt",
        contentType: "text/plain",
      })
    ).json()) as { url: string };
    expect(
      (await fetch(upload.url, { method: "PUT", headers: { "content-type": "text/plain" }, body: "kingfishers dive" }))
        .status,
    ).toBe(201);
    const out = join(root, "pg-backup");
    const backup = await runCli(["backup", "--out", out, "--data", source]);
    expect(backup.exitCode).toBe(0);
    expect(backup.stdout).toContain("backed up file bytes");
    expect(backup.stdout).toMatch(/next: \(umask 077; pg_dump --format=custom --file \S+mnemo\.pgdump 'postgres:\/\//);
    expect(existsSync(join(out, "blobs"))).toBe(true);
    server.proc.kill("SIGTERM");
    await server.proc.exited;
    const target = dataDir("pg-restored");
    const restored = await runCli(["restore", out, "--data", target]);
    expect([restored.exitCode, restored.stdout]).toEqual([
      0,
      expect.stringContaining("next: first restore the database: pg_restore"),
    ]);
    expect(existsSync(join(target, "blobs"))).toBe(true);
  });
});
