import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { killSpawnedServers, runCli, spawnServer } from "./helpers/cli";
import { databaseEnvFor } from "./helpers/database";
import { tempDir } from "./helpers/server";

afterEach(killSpawnedServers);

const dataDir = tempDir("mnemo-cli-");
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("mnemo keys", () => {
  test("create prints the key once; list never shows secrets; revoke marks it", async () => {
    const created = await runCli([
      "keys",
      "create",
      "--user",
      "u1",
      "--scopes",
      "memory:read,chat",
      "--name",
      "laptop",
      "--json",
      "--data",
      dataDir,
    ]);
    expect({ exitCode: created.exitCode, stderr: created.stderr }).toEqual({ exitCode: 0, stderr: "" });
    const key = JSON.parse(created.stdout);
    expect(key).toEqual({
      id: expect.stringMatching(/^key_/),
      userId: "u1",
      name: "laptop",
      mode: "live",
      prefix: expect.stringMatching(/^svc_sk_live_[0-9A-Za-z]{8}$/),
      scopes: ["memory:read", "chat"],
      createdAt: expect.any(String),
      lastUsedAt: null,
      revokedAt: null,
      key: expect.stringMatching(/^svc_sk_live_/),
    });

    const listed = await runCli(["keys", "list", "--json", "--data", dataDir]);
    expect(listed.exitCode).toBe(0);
    const { key: secret, ...withoutSecret } = key;
    expect(JSON.parse(listed.stdout)).toEqual([withoutSecret]);
    expect(listed.stdout).not.toContain(secret);

    const table = await runCli(["keys", "list", "--user", "u1", "--data", dataDir]);
    expect([table.exitCode, table.stdout.includes(key.id), table.stdout.includes(secret)]).toEqual([0, true, false]);

    const revoked = await runCli(["keys", "revoke", key.id, "--data", dataDir]);
    expect([revoked.exitCode, revoked.stdout.trim()]).toEqual([0, `revoked ${key.id}`]);
    const again = await runCli(["keys", "list", "--json", "--data", dataDir]);
    expect(JSON.parse(again.stdout)[0].revokedAt).toEqual(expect.any(String));
  });

  test("plain create prints only the key on stdout; --test makes a test key; default scopes are all", async () => {
    const created = await runCli(["keys", "create", "--user", "u2", "--test", "--data", dataDir]);
    expect(created.exitCode).toBe(0);
    expect(created.stdout).toMatch(/^svc_sk_test_[0-9A-Za-z]{40}\n$/);
    const listed = JSON.parse((await runCli(["keys", "list", "--user", "u2", "--json", "--data", dataDir])).stdout);
    expect(listed[0].scopes).toEqual(["chat", "memory:read", "memory:write", "files:write", "usage:read"]);
  });

  test.each([
    [["keys", "create"], /^mnemo: --user: is required\n$/],
    [["keys", "create", "--user", "u", "--scopes", "memory:read,admin"], /--scopes: unknown scope 'admin'/],
    [["keys", "revoke", "key_nope"], /no API key with id 'key_nope'/],
    [["dev-token", "create", "--user", "u", "--ttl", "soon"], /--ttl: 'soon' is not a duration/],
    [["serve", "--port", "99999"], /--port: '99999' is not a port number/],
  ])("%j fails with a message on stderr and a non-zero exit", async (args, message) => {
    const result = await runCli([...args, "--data", dataDir]);
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe("");
  });
});

describe("mnemo dev-token", () => {
  test("create prints a svc_dev_ token with its expiry", async () => {
    const result = await runCli(["dev-token", "create", "--user", "dev", "--ttl", "2h", "--json", "--data", dataDir]);
    expect(result.exitCode).toBe(0);
    const token = JSON.parse(result.stdout);
    expect(token).toEqual({
      id: expect.stringMatching(/^dev_/),
      userId: "dev",
      token: expect.stringMatching(/^svc_dev_/),
      expiresAt: expect.any(String),
      createdAt: expect.any(String),
    });
    const ttl = Date.parse(token.expiresAt) - Date.parse(token.createdAt);
    expect(ttl).toBe(2 * 3600 * 1000);
  });
});

describe("mnemo serve with the CLI beside it", () => {
  test("keys made while the server runs work at once; revocation too; SIGTERM shuts down cleanly", async () => {
    const dir = tempDir("mnemo-serve-");
    const server = await spawnServer(["--data", dir]);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const { stdout: key } = await runCli(["keys", "create", "--user", "live-user", "--data", dir]);
    const auth = { authorization: `Bearer ${key.trim()}`, "content-type": "application/json" };
    const created = await fetch(`${server.url}/v1/memories`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ content: "written through a CLI key" }),
    });
    expect(created.status).toBe(201);

    const { stdout: list } = await runCli(["keys", "list", "--json", "--data", dir]);
    await runCli(["keys", "revoke", JSON.parse(list)[0].id, "--data", dir]);
    expect((await fetch(`${server.url}/v1/memories`, { headers: auth })).status).toBe(401);

    server.proc.kill("SIGTERM");
    expect(await server.proc.exited).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });

  test("mock tokens are refused unless --allow-mock-tokens, which logs a warning", async () => {
    const dir = tempDir("mnemo-serve-");
    const strict = await spawnServer(["--data", dir]);
    expect(
      (await fetch(`${strict.url}/v1/memories`, { headers: { authorization: "Bearer mock-token-a" } })).status,
    ).toBe(401);
    strict.proc.kill("SIGINT");
    expect(await strict.proc.exited).toBe(0);

    const lax = await spawnServer(["--data", dir, "--allow-mock-tokens"]);
    expect((await fetch(`${lax.url}/v1/memories`, { headers: { authorization: "Bearer mock-token-a" } })).status).toBe(
      200,
    );
    lax.proc.kill("SIGTERM");
    expect(await lax.proc.exited).toBe(0);
    expect(await lax.stderr()).toContain("mock tokens are accepted");
    rmSync(dir, { recursive: true, force: true });
  });
});

describe("what a run leaves in $TMPDIR", () => {
  // LanceDB makes an empty .tmpXXXXXX dir per Session in $TMPDIR and removes it only when the
  // Session is dropped, which process.exit skips.
  test("mnemo serve, started and stopped, leaves nothing", async () => {
    const dir = tempDir("mnemo-tmpdir-");
    const tmp = join(dir, "tmp");
    mkdirSync(tmp);
    const server = await spawnServer(["--data", join(dir, "data")], { TMPDIR: tmp });
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    server.proc.kill("SIGTERM");
    expect(await server.proc.exited).toBe(0);
    expect(readdirSync(tmp)).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
  });

  test("mnemo mcp, ended by its client closing stdin, leaves nothing", async () => {
    const dir = tempDir("mnemo-tmpdir-");
    const tmp = join(dir, "tmp");
    mkdirSync(tmp);
    const data = join(dir, "data");
    const proc = Bun.spawn(
      [process.execPath, join(import.meta.dir, "..", "cli", "mnemo.ts"), "mcp", "--user", "t", "--data", data],
      {
        env: {
          PATH: process.env.PATH ?? "",
          HOME: process.env.HOME ?? "/tmp",
          EMBEDDINGS_PROVIDER: "none",
          TMPDIR: tmp,
          ...(await databaseEnvFor(data)),
        },
        stdin: "pipe",
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    };
    proc.stdin.write(`${JSON.stringify(initialize)}\n`);
    await proc.stdin.flush();
    const reader = proc.stdout.getReader();
    let answer = "";
    while (!answer.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      answer += new TextDecoder().decode(value);
    }
    expect(JSON.parse(answer.split("\n")[0])).toMatchObject({ id: 1, result: { serverInfo: expect.any(Object) } });
    await proc.stdin.end();
    expect(await proc.exited).toBe(0);
    expect(readdirSync(tmp)).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe("mnemo reindex", () => {
  const post = (url: string, path: string, body: unknown) =>
    fetch(url + path, {
      method: "POST",
      headers: { authorization: "Bearer mock-token-r", "content-type": "application/json" },
      body: JSON.stringify(body),
    }).then((r) => r.json() as Promise<any>);

  test("offline: rebuilds a deleted index from SQLite", async () => {
    const dir = tempDir("mnemo-reindex-");
    const first = await spawnServer(["--data", dir, "--allow-mock-tokens"]);
    for (const content of ["alpha lighthouse", "beta lighthouse", "gamma harbour"])
      await post(first.url, "/v1/memories", { content });
    first.proc.kill("SIGTERM");
    await first.proc.exited;

    rmSync(join(dir, "index"), { recursive: true, force: true });
    const result = await runCli(["reindex", "--data", dir, "--json"]);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(expect.objectContaining({ sources: 3, by: "cli", pendingText: 0 }));

    const second = await spawnServer(["--data", dir, "--allow-mock-tokens"]);
    const found = await post(second.url, "/v1/memories/search", { query: "lighthouse", signals: ["text"] });
    expect(found.results.map((r: { content: string }) => r.content).sort()).toEqual([
      "alpha lighthouse",
      "beta lighthouse",
    ]);
    second.proc.kill("SIGTERM");
    await second.proc.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  test("--embeddings with no embedding model stops with the reason, beside a running server and offline", async () => {
    const dir = tempDir("mnemo-reindex-");
    const models = join(dir, "models");
    mkdirSync(models);
    const env = { EMBEDDINGS_PROVIDER: "local", MNEMO_MODEL_DOWNLOAD: "0", MNEMO_MODELS_DIR: models };
    const server = await spawnServer(["--data", join(dir, "data"), "--allow-mock-tokens"], env);
    for (const content of ["zeta meadow", "eta meadow"]) await post(server.url, "/v1/memories", { content });
    const reason = `local embedder: model all-MiniLM-L6-v2 is unavailable: not found in ${join(models, "all-MiniLM-L6-v2")} and download is disabled`;
    const message = `mnemo: the full-text index is rebuilt, but vectors cannot be made: ${reason}; 2 wait in the queue and are filled in once the embedder answers`;

    const online = await runCli(["reindex", "--embeddings", "--json", "--data", join(dir, "data")], env);
    expect({ exitCode: online.exitCode, stdout: online.stdout, stderr: online.stderr.trimEnd() }).toEqual({
      exitCode: 1,
      stdout: "",
      stderr: message,
    });
    // The full-text index was rebuilt all the same.
    const found = await post(server.url, "/v1/memories/search", { query: "meadow" });
    expect(found.results).toHaveLength(2);
    server.proc.kill("SIGTERM");
    expect(await server.proc.exited).toBe(0);

    const offline = await runCli(["reindex", "--embeddings", "--json", "--data", join(dir, "data")], env);
    expect({ exitCode: offline.exitCode, stdout: offline.stdout, stderr: offline.stderr.trimEnd() }).toEqual({
      exitCode: 1,
      stdout: "",
      stderr: message,
    });
    rmSync(dir, { recursive: true, force: true });
  });

  test("while a server runs: the server does the rebuild and the CLI follows it", async () => {
    const dir = tempDir("mnemo-reindex-");
    const server = await spawnServer(["--data", dir, "--allow-mock-tokens"]);
    for (const content of ["delta orchard", "epsilon orchard"]) await post(server.url, "/v1/memories", { content });
    const result = await runCli(["reindex", "--data", dir, "--json"]);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(expect.objectContaining({ sources: 2, by: "server" }));
    const found = await post(server.url, "/v1/memories/search", { query: "orchard" });
    expect(found.results).toHaveLength(2);
    server.proc.kill("SIGTERM");
    expect(await server.proc.exited).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });
});
