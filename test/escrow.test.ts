import { afterAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../src/config";
import { openEscrow, sealEscrow } from "../src/crypto/escrow";
import { all, run, sql } from "../src/db/store";
import { createLogger } from "../src/lib/log";
import { startServer } from "../src/server";
import { runCli } from "./helpers/cli";
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
  const config = loadConfig({ dataDir, port: 0, allowMockTokens: true, logLevel: "debug" }, { EMBEDDINGS_PROVIDER: "none", ...(await databaseEnvFor(dataDir)), ...env });
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
      await run(store.db, sql`INSERT INTO client_key_escrow (user_id, wrapped_key, created_at, updated_at)
                              SELECT ${"mallory"}, wrapped_key, created_at, updated_at FROM client_key_escrow WHERE user_id = ${"alice"}`);
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
  test.skipIf(!!TEST_DATABASE_URL)("the embedded server creates <data>/master.key with mode 0600 and says so once", async () => {
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
  });

  test("PostgreSQL storage without SERVER_MASTER_KEY stops the start with a clear message", async () => {
    const env = { EMBEDDINGS_PROVIDER: "none", MNEMO_DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" };
    const config = loadConfig({ dataDir: tempDir(), port: 0 }, env);
    expect(startServer(config, { log: createLogger("error", () => {}) })).rejects.toThrow(/^SERVER_MASTER_KEY is required with PostgreSQL storage/);
    const cli = await runCli(["serve", "--port", "0", "--data", tempDir()], { ...env, SERVER_MASTER_KEY: "" });
    expect(cli.exitCode).not.toBe(0);
    expect(cli.stderr).toContain("SERVER_MASTER_KEY is required with PostgreSQL storage");
  });

  test("a malformed SERVER_MASTER_KEY, or a different one than the escrow was sealed with, stops the start", async () => {
    const config = loadConfig({ dataDir: tempDir(), port: 0 }, { EMBEDDINGS_PROVIDER: "none", SERVER_MASTER_KEY: "too-short" });
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

    const set = await runCli(["escrow", "set", "--user", "alice", "--key-file", keyFile, "--data", dataDir, "--json"], env);
    expect([set.exitCode, set.stderr]).toEqual([0, ""]);
    expect(JSON.parse(set.stdout)).toMatchObject({ userId: "alice", escrowed: true, generated: false, present: true });
    const generated = await runCli(["escrow", "set", "--user", "bob", "--generate", "--data", dataDir], env);
    expect([generated.exitCode, generated.stdout, generated.stderr]).toEqual([0, "escrowed a generated client key for bob\n", ""]);
    const both = await runCli(["escrow", "set", "--user", "bob", "--generate", "--key-file", keyFile, "--data", dataDir], env);
    expect([both.exitCode, both.stderr]).toEqual([1, expect.stringContaining("give exactly one of --key-file <file> or --generate")]);

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
    writeFileSync(newKeyFile, newMaster.toString("hex") + "\n");
    const keys = { alice: remember(randomBytes(32)), bob: remember(randomBytes(32)) };

    let server = await start({ SERVER_MASTER_KEY: oldMaster }, dataDir);
    await server.services.escrow.set("alice", keys.alice);
    await server.services.escrow.set("bob", keys.bob);
    // A blob sealed for someone else cannot be opened as carol's: rotation must stop on it.
    await run(server.services.store.db, sql`INSERT INTO client_key_escrow (user_id, wrapped_key, created_at, updated_at)
                                            SELECT ${"carol"}, wrapped_key, created_at, updated_at FROM client_key_escrow WHERE user_id = ${"alice"}`);
    const rows = () => all<{ user_id: string; wrapped_key: string }>(server.services.store.db, sql`SELECT user_id, wrapped_key FROM client_key_escrow ORDER BY user_id`);
    const before = await rows();
    await server.stop();

    const refused = await runCli(["escrow", "rotate-master", "--new-key-file", newKeyFile, "--data", dataDir], { SERVER_MASTER_KEY: oldMaster });
    expect([refused.exitCode, refused.stderr]).toEqual([1, expect.stringContaining("the escrowed key of user 'carol' does not open under the current master key; nothing was rotated")]);
    server = await start({ SERVER_MASTER_KEY: oldMaster }, dataDir);
    expect(await rows()).toEqual(before);
    await run(server.services.store.db, sql`DELETE FROM client_key_escrow WHERE user_id = ${"carol"}`);
    await server.stop();

    const rotated = await runCli(["escrow", "rotate-master", "--new-key-file", newKeyFile, "--data", dataDir, "--json"], { SERVER_MASTER_KEY: oldMaster });
    expect([rotated.exitCode, JSON.parse(rotated.stdout)]).toEqual([0, { rotated: 2, keyFile: null }]);
    expect(start({ SERVER_MASTER_KEY: oldMaster }, dataDir)).rejects.toThrow(/is not the one escrowed client keys were sealed with/);
    server = await start({ SERVER_MASTER_KEY: newMaster.toString("base64") }, dataDir);
    try {
      expect([await server.services.escrow.get("alice"), await server.services.escrow.get("bob")]).toEqual([keys.alice, keys.bob]);
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
    expect([rotated.exitCode, rotated.stdout]).toEqual([0, `re-sealed 1 escrowed key(s); ${join(dataDir, "master.key")} now holds the new key\n`]);
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

test("no master key or client key reached the logs of this file", () => {
  expect(logLines.length).toBeGreaterThan(0);
  expect(logLines.filter((line) => secrets.some((secret) => line.includes(secret)))).toEqual([]);
});
