import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../src/config";
import { createEscrowService, openEscrow, sealEscrow } from "../src/crypto/escrow";
import { all, run, sql } from "../src/db/store";
import { createLogger } from "../src/lib/log";
import { startServer } from "../src/server";
import { killSpawnedServers, runCli, spawnServer } from "./helpers/cli";
import { databaseEnvFor, dropDatabaseFor, TEST_DATABASE_URL } from "./helpers/database";
import { tempDir, withClient, type TestServer } from "./helpers/server";

const logLines: string[] = [];
const secrets: string[] = [];
const remember = (key: Buffer) => {
  secrets.push(key.toString("hex"), key.toString("base64"));
  return key;
};
const dirs: string[] = [];

/** A server on `dataDir` (a fresh one by default) with its log captured; `env` wins over the defaults. */
async function start(env: Record<string, string> = {}, dataDir = tempDir()): Promise<TestServer> {
  if (!dirs.includes(dataDir)) dirs.push(dataDir);
  const config = loadConfig(
    { dataDir, port: 0, allowMockTokens: true, logLevel: "debug" },
    { EMBEDDINGS_PROVIDER: "none", ...(await databaseEnvFor(dataDir)), ...env },
  );
  return withClient(await startServer(config, { log: createLogger("debug", (line) => logLines.push(line)) }), dataDir);
}

afterAll(async () => {
  for (const dir of dirs) await dropDatabaseFor(dir);
});

describe("sealing", () => {
  test("an escrow blob opens only for its own user and under its own master key (user id is associated data)", () => {
    const master = remember(randomBytes(32));
    const clientKey = remember(randomBytes(32));
    const blob = sealEscrow("alice", clientKey, master);
    expect(blob).toMatch(/^v1:[0-9a-f]{24}:[0-9a-f]{32}:[0-9a-f]{64}$/);
    expect(openEscrow("alice", blob, master)).toEqual(clientKey);
    expect(() => openEscrow("bob", blob, master)).toThrow();
    expect(() => openEscrow("alice", blob, randomBytes(32))).toThrow();
    expect(sealEscrow("alice", clientKey, master)).not.toBe(blob);
  });

  test("a blob copied to another user's row does not open: that user resolves no key and reads ciphertext unchanged", async () => {
    const server = await start();
    try {
      const clientKey = remember(randomBytes(32));
      await server.services.escrow.set("alice", clientKey);
      const store = server.services.store;
      await run(
        store.db,
        sql`INSERT INTO client_key_escrow (user_id, wrapped_key, created_at, updated_at)
                              SELECT ${"mallory"}, wrapped_key, created_at, updated_at FROM client_key_escrow WHERE user_id = ${"alice"}`,
      );
      expect(await server.services.clientKeys.resolve("alice")).toEqual(clientKey);
      expect(await server.services.clientKeys.resolve("mallory")).toBeNull();
      expect(server.services.escrow.get("mallory")).rejects.toThrow();
      expect(await server.services.escrow.status("mallory")).toMatchObject({ present: true });
    } finally {
      await server.destroy();
    }
  });
});

describe("the master key", () => {
  test.skipIf(!!TEST_DATABASE_URL)(
    "the embedded server creates <data>/master.key with mode 0600 and says so once",
    async () => {
      const dataDir = tempDir();
      const before = logLines.length;
      const first = await start({}, dataDir);
      await first.stop();
      const path = join(dataDir, "master.key");
      expect(existsSync(path)).toBe(true);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      const key = readFileSync(path, "utf8").trim();
      remember(Buffer.from(key, "hex"));
      expect(key).toMatch(/^[0-9a-f]{64}$/);
      const second = await start({}, dataDir);
      await second.stop();
      expect(readFileSync(path, "utf8").trim()).toBe(key);
      await second.destroy();
      expect(logLines.slice(before).filter((line) => line.includes("created a server master key"))).toHaveLength(1);
    },
  );

  test("PostgreSQL storage without SERVER_MASTER_KEY stops the start with a clear message", async () => {
    const env = { EMBEDDINGS_PROVIDER: "none", MNEMO_DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" };
    const config = loadConfig({ dataDir: tempDir(), port: 0 }, env);
    expect(startServer(config, { log: createLogger("error", () => {}) })).rejects.toThrow(
      /^SERVER_MASTER_KEY is required with PostgreSQL storage/,
    );
    const cli = await runCli(["serve", "--port", "0", "--data", tempDir()], { ...env, SERVER_MASTER_KEY: "" });
    expect(cli.exitCode).not.toBe(0);
    expect(cli.stderr).toContain("SERVER_MASTER_KEY is required with PostgreSQL storage");
  });

  test("a malformed SERVER_MASTER_KEY, or a different one than the escrow was sealed with, stops the start", async () => {
    const config = loadConfig(
      { dataDir: tempDir(), port: 0 },
      { EMBEDDINGS_PROVIDER: "none", SERVER_MASTER_KEY: "too-short" },
    );
    expect(startServer(config, { log: createLogger("error", () => {}) })).rejects.toThrow(
      "SERVER_MASTER_KEY: must be a 32-byte key as 64 hex characters or base64 (e.g. the output of `openssl rand -hex 32`)",
    );
    const dataDir = tempDir();
    const first = await start({ SERVER_MASTER_KEY: remember(randomBytes(32)).toString("hex") }, dataDir);
    await first.services.escrow.set("alice", remember(randomBytes(32)));
    await first.stop();
    expect(start({ SERVER_MASTER_KEY: remember(randomBytes(32)).toString("base64") }, dataDir)).rejects.toThrow(
      /is not the one escrowed client keys were sealed with/,
    );
  });
});

describe("mnemo escrow", () => {
  test("set (key file or generated), status, remove; keys are never printed", async () => {
    const dataDir = tempDir();
    dirs.push(dataDir);
    const master = remember(randomBytes(32)).toString("hex");
    const env = { SERVER_MASTER_KEY: master };
    const clientKey = remember(randomBytes(32));
    const keyFile = join(dataDir, "client.key");
    writeFileSync(keyFile, clientKey.toString("base64"));

    const set = await runCli(
      ["escrow", "set", "--user", "alice", "--key-file", keyFile, "--data", dataDir, "--json"],
      env,
    );
    expect([set.exitCode, set.stderr]).toEqual([0, ""]);
    expect(JSON.parse(set.stdout)).toMatchObject({ userId: "alice", escrowed: true, generated: false, present: true });
    const generated = await runCli(["escrow", "set", "--user", "bob", "--generate", "--data", dataDir], env);
    expect([generated.exitCode, generated.stdout, generated.stderr]).toEqual([
      0,
      "escrowed a generated client key for bob\n",
      "",
    ]);
    const both = await runCli(
      ["escrow", "set", "--user", "bob", "--generate", "--key-file", keyFile, "--data", dataDir],
      env,
    );
    expect([both.exitCode, both.stderr]).toEqual([
      1,
      expect.stringContaining("give exactly one of --key-file <file> or --generate"),
    ]);

    const status = await runCli(["escrow", "status", "--user", "alice", "--data", dataDir, "--json"], env);
    expect(JSON.parse(status.stdout)).toMatchObject({ userId: "alice", present: true, opens: true });
    const server = await start(env, dataDir);
    try {
      expect(await server.services.clientKeys.resolve("alice")).toEqual(clientKey);
      const [code, me] = await server.call("GET", "/v1/me", { token: "mock-token-alice" });
      expect([code, me.clientKeyEscrow]).toEqual([200, { present: true }]);
    } finally {
      await server.stop();
    }
    const removed = await runCli(["escrow", "remove", "--user", "alice", "--data", dataDir], env);
    expect([removed.exitCode, removed.stdout]).toEqual([0, "removed the escrowed key of alice\n"]);
    const none = await runCli(["escrow", "status", "--user", "alice", "--data", dataDir], env);
    expect([none.exitCode, none.stdout]).toEqual([0, "no escrowed key\n"]);
    for (const output of [set, generated, status, removed, none]) {
      expect(secrets.filter((secret) => output.stdout.includes(secret) || output.stderr.includes(secret))).toEqual([]);
    }
  });

  test("rotate-master re-seals every escrowed key in one transaction; a blob that does not open aborts it and changes nothing", async () => {
    const dataDir = tempDir();
    dirs.push(dataDir);
    const oldMaster = remember(randomBytes(32)).toString("hex");
    const newMaster = remember(randomBytes(32));
    const newKeyFile = join(dataDir, "new.key");
    writeFileSync(newKeyFile, `${newMaster.toString("hex")}\n`);
    const keys = { alice: remember(randomBytes(32)), bob: remember(randomBytes(32)) };

    let server = await start({ SERVER_MASTER_KEY: oldMaster }, dataDir);
    await server.services.escrow.set("alice", keys.alice);
    await server.services.escrow.set("bob", keys.bob);
    // A blob sealed for someone else cannot be opened as carol's: rotation must stop on it.
    await run(
      server.services.store.db,
      sql`INSERT INTO client_key_escrow (user_id, wrapped_key, created_at, updated_at)
                                            SELECT ${"carol"}, wrapped_key, created_at, updated_at FROM client_key_escrow WHERE user_id = ${"alice"}`,
    );
    const rows = () =>
      all<{ user_id: string; wrapped_key: string }>(
        server.services.store.db,
        sql`SELECT user_id, wrapped_key FROM client_key_escrow ORDER BY user_id`,
      );
    const before = await rows();
    await server.stop();

    const refused = await runCli(["escrow", "rotate-master", "--new-key-file", newKeyFile, "--data", dataDir], {
      SERVER_MASTER_KEY: oldMaster,
    });
    expect([refused.exitCode, refused.stderr]).toEqual([
      1,
      expect.stringContaining(
        "the escrowed key of user 'carol' does not open under the current master key; nothing was rotated",
      ),
    ]);
    server = await start({ SERVER_MASTER_KEY: oldMaster }, dataDir);
    expect(await rows()).toEqual(before);
    await run(server.services.store.db, sql`DELETE FROM client_key_escrow WHERE user_id = ${"carol"}`);
    await server.stop();

    const rotated = await runCli(
      ["escrow", "rotate-master", "--new-key-file", newKeyFile, "--data", dataDir, "--json"],
      { SERVER_MASTER_KEY: oldMaster },
    );
    expect([rotated.exitCode, JSON.parse(rotated.stdout)]).toEqual([0, { rotated: 2, keyFile: null }]);
    expect(start({ SERVER_MASTER_KEY: oldMaster }, dataDir)).rejects.toThrow(
      /is not the one escrowed client keys were sealed with/,
    );
    server = await start({ SERVER_MASTER_KEY: newMaster.toString("base64") }, dataDir);
    try {
      expect([await server.services.escrow.get("alice"), await server.services.escrow.get("bob")]).toEqual([
        keys.alice,
        keys.bob,
      ]);
    } finally {
      await server.destroy();
    }
  });

  test.skipIf(!!TEST_DATABASE_URL)("on the embedded store, rotate-master also replaces <data>/master.key", async () => {
    const dataDir = tempDir();
    const server = await start({}, dataDir);
    const clientKey = remember(randomBytes(32));
    await server.services.escrow.set("alice", clientKey);
    await server.stop();
    remember(Buffer.from(readFileSync(join(dataDir, "master.key"), "utf8").trim(), "hex"));
    const newKeyFile = join(tempDir(), "new.key");
    writeFileSync(newKeyFile, remember(randomBytes(32)));
    const rotated = await runCli(["escrow", "rotate-master", "--new-key-file", newKeyFile, "--data", dataDir]);
    expect([rotated.exitCode, rotated.stdout]).toEqual([
      0,
      `re-sealed 1 escrowed key(s); ${join(dataDir, "master.key")} now holds the new key\n`,
    ]);
    expect(readFileSync(join(dataDir, "master.key"), "utf8").trim()).toBe(readFileSync(newKeyFile).toString("hex"));
    expect(statSync(join(dataDir, "master.key")).mode & 0o777).toBe(0o600);
    const again = await start({}, dataDir);
    try {
      expect(await again.services.escrow.get("alice")).toEqual(clientKey);
    } finally {
      await again.destroy();
    }
  });
});

describe("rotate-master while a server runs", () => {
  afterEach(killSpawnedServers);

  /** A document sealed with `clientKey` through a running server, and how it reads back with X-Proxy-Decrypt and no X-Client-Key (the escrowed key). */
  async function sealedThroughServer(url: string, clientKey: Buffer) {
    const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const response = await fetch(url + path, {
        method,
        headers: { authorization: "Bearer mock-token-alice", "content-type": "application/json", ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return {
        status: response.status,
        body: (await response.json()) as any,
        errors: response.headers.get("x-svc-decrypt-errors"),
      };
    };
    const ws = await call("POST", "/v1/workspaces", { name: "Rotate" });
    const doc = await call("POST", "/v1/documents", {
      workspace_id: ws.body.id,
      title: "T",
      markdown: "escrow still opens",
      client_key: clientKey.toString("hex"),
    });
    expect(doc.status).toBe(201);
    return async () => {
      const got = await call("GET", `/v1/workspaces/${ws.body.id}/documents/${doc.body.document.id}`, undefined, {
        "x-proxy-decrypt": "true",
      });
      const me = await call("GET", "/v1/me");
      return { markdown: got.body.markdown, errors: got.errors, escrow: me.body.clientKeyEscrow };
    };
  }

  test.skipIf(!!TEST_DATABASE_URL)(
    "with <data>/master.key, a running server picks up the new key: escrow keeps opening, no restart",
    async () => {
      const dataDir = tempDir();
      const clientKey = remember(randomBytes(32));
      const keyFile = join(tempDir(), "client.key");
      writeFileSync(keyFile, clientKey.toString("hex"));
      expect(
        (await runCli(["escrow", "set", "--user", "alice", "--key-file", keyFile, "--data", dataDir])).exitCode,
      ).toBe(0);
      remember(Buffer.from(readFileSync(join(dataDir, "master.key"), "utf8").trim(), "hex"));
      const server = await spawnServer(["--data", dataDir, "--allow-mock-tokens"]);
      const read = await sealedThroughServer(server.url, clientKey);
      const opened = { markdown: "escrow still opens", errors: null, escrow: { present: true } };
      expect(await read()).toEqual(opened);

      const newKeyFile = join(tempDir(), "new.key");
      writeFileSync(newKeyFile, remember(randomBytes(32)).toString("hex"));
      const rotated = await runCli(["escrow", "rotate-master", "--new-key-file", newKeyFile, "--data", dataDir]);
      expect([rotated.exitCode, rotated.stderr]).toEqual([0, ""]);
      expect(await read()).toEqual(opened);
      // The CLI, reading the new key file, opens the re-sealed blob.
      const status = await runCli(["escrow", "status", "--user", "alice", "--data", dataDir, "--json"]);
      expect(JSON.parse(status.stdout)).toMatchObject({ present: true, opens: true });
      server.proc.kill("SIGTERM");
      expect(await server.proc.exited).toBe(0);
      rmSync(dataDir, { recursive: true, force: true });
    },
  );

  test("with SERVER_MASTER_KEY, the command refuses while a server runs on the store, says why, and changes nothing", async () => {
    const dataDir = tempDir();
    dirs.push(dataDir);
    const master = remember(randomBytes(32)).toString("hex");
    const env = { SERVER_MASTER_KEY: master };
    const clientKey = remember(randomBytes(32));
    const server = await spawnServer(["--data", dataDir, "--allow-mock-tokens"], env);
    const read = await sealedThroughServer(server.url, clientKey);
    const keyFile = join(dataDir, "client.key");
    writeFileSync(keyFile, clientKey.toString("hex"));
    expect(
      (await runCli(["escrow", "set", "--user", "alice", "--key-file", keyFile, "--data", dataDir], env)).exitCode,
    ).toBe(0);
    const opened = { markdown: "escrow still opens", errors: null, escrow: { present: true } };
    expect(await read()).toEqual(opened);

    const newKeyFile = join(dataDir, "new.key");
    const newMaster = remember(randomBytes(32));
    writeFileSync(newKeyFile, newMaster.toString("hex"));
    const refused = await runCli(["escrow", "rotate-master", "--new-key-file", newKeyFile, "--data", dataDir], env);
    expect([refused.exitCode, refused.stdout]).toEqual([1, ""]);
    expect(refused.stderr).toMatch(
      /^mnemo: a server is running on this store \(index writer [^)]+\): it read SERVER_MASTER_KEY at start and cannot learn a new one, /,
    );
    expect(refused.stderr).toContain(
      "Stop every server, run this again, then start them with SERVER_MASTER_KEY set to the new key\n",
    );
    expect(await read()).toEqual(opened);

    server.proc.kill("SIGTERM");
    expect(await server.proc.exited).toBe(0);
    const rotated = await runCli(
      ["escrow", "rotate-master", "--new-key-file", newKeyFile, "--data", dataDir, "--json"],
      env,
    );
    expect([rotated.exitCode, JSON.parse(rotated.stdout)]).toEqual([0, { rotated: 1, keyFile: null }]);
    const restarted = await spawnServer(["--data", dataDir, "--allow-mock-tokens"], {
      SERVER_MASTER_KEY: newMaster.toString("hex"),
    });
    const again = await fetch(`${restarted.url}/v1/me`, { headers: { authorization: "Bearer mock-token-alice" } });
    expect(((await again.json()) as any).clientKeyEscrow).toEqual({ present: true });
    restarted.proc.kill("SIGTERM");
    await restarted.proc.exited;
  });

  test("two processes on one store: after one rotates, the other re-reads its key source before it opens or seals a key", async () => {
    const server = await start({ SERVER_MASTER_KEY: remember(randomBytes(32)).toString("hex") });
    try {
      const { store } = server.services;
      const oldMaster = Buffer.from(server.services.config.encryption.masterKey!, "hex");
      const newMaster = remember(randomBytes(32));
      let source: Buffer = oldMaster;
      const running = await createEscrowService(store, oldMaster, { reloadKeys: () => [source] });
      const cli = await createEscrowService(store, oldMaster);
      const alice = remember(randomBytes(32));
      await running.set("alice", alice);
      source = newMaster;
      await cli.rotateMaster(newMaster);
      expect(await running.get("alice")).toEqual(alice);
      // A key escrowed by the running process now is sealed under the new key.
      const bob = remember(randomBytes(32));
      expect(await running.set("bob", bob)).toBe("escrowed");
      expect(await cli.get("bob")).toEqual(bob);
      // Without a source to re-read (SERVER_MASTER_KEY), it cannot follow: it refuses to seal under the old key.
      const stale = await createEscrowService(store, newMaster);
      await stale.rotateMaster(oldMaster);
      expect(running.set("carol", randomBytes(32))).rejects.toThrow(
        /was rotated by another process; restart this server with the new key/,
      );
      expect(await cli.get("alice").catch(() => "does not open")).toBe("does not open");
    } finally {
      await server.destroy();
    }
  });
});

test("no master key or client key reached the logs of this file", () => {
  expect(logLines.length).toBeGreaterThan(0);
  expect(logLines.filter((line) => secrets.some((secret) => line.includes(secret)))).toEqual([]);
});
