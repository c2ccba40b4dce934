import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../src/config";
import { createLogger } from "../src/lib/log";
import { startServer } from "../src/server";
import { runCli } from "./helpers/cli";
import { databaseEnvFor, dropDatabaseFor } from "./helpers/database";
import { startFakeIdp } from "./helpers/fake-idp";
import { tempDir, withClient, type TestServer } from "./helpers/server";
import { createWorkspace } from "./helpers/workspaces";

/**
 * An escrowed client key is never replaced silently. `mnemo escrow
 * set` refuses a different key without --force and the onboarding webhook answers 409
 * naming `clientKey`, both saying what would stop opening through escrow.
 */
const ONBOARD = "onboard-hook-replace";
const MASTER = randomBytes(32).toString("hex");
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await dropDatabaseFor(dir);
});

async function start(env: Record<string, string> = {}): Promise<TestServer> {
  const dataDir = tempDir();
  dirs.push(dataDir);
  const config = loadConfig(
    { dataDir, port: 0, allowMockTokens: true, logLevel: "error" },
    { EMBEDDINGS_PROVIDER: "none", ...(await databaseEnvFor(dataDir)), SERVER_MASTER_KEY: MASTER, ...env },
  );
  return withClient(await startServer(config, { log: createLogger("error", () => {}) }), dataDir);
}

/** Two documents and a chat message sealed with `key` for `token`'s user, one plain document beside them. */
async function sealSome(server: TestServer, key: Buffer, token: string) {
  const ws = await createWorkspace(server, "Sealed", token);
  const keyHex = key.toString("hex");
  for (const title of ["One", "Two"]) {
    const [status] = await server.call("POST", "/v1/documents", {
      token,
      body: { workspace_id: ws, title, markdown: `secret ${title}`, client_key: keyHex },
    });
    expect(status).toBe(201);
  }
  expect(
    (
      await server.call("POST", "/v1/documents", {
        token,
        body: { workspace_id: ws, title: "Plain", markdown: "plain" },
      })
    )[0],
  ).toBe(201);
  const [, thread] = await server.call("POST", `/v1/workspaces/${ws}/chats`, { token, body: { title: "Chat" } });
  expect(
    (
      await server.call("POST", `/v1/workspaces/${ws}/chats/${thread.id}/messages`, {
        token,
        body: { role: "user", content: "hi", client_key: keyHex },
      })
    )[0],
  ).toBe(201);
}

describe("mnemo escrow set", () => {
  test("a different key is refused without --force, counting what it sealed; the same key changes nothing; --force replaces", async () => {
    const server = await start();
    const env = { SERVER_MASTER_KEY: MASTER };
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const files = { old: join(server.dataDir, "old.key"), new: join(server.dataDir, "new.key") };
    writeFileSync(files.old, oldKey.toString("hex"));
    writeFileSync(files.new, newKey.toString("hex"));
    await sealSome(server, oldKey, "mock-token-alice");
    await server.stop();
    const data = ["--data", server.dataDir];
    try {
      const first = await runCli(["escrow", "set", "--user", "alice", "--key-file", files.old, ...data], env);
      expect([first.exitCode, first.stdout, first.stderr]).toEqual([0, "escrowed a client key for alice\n", ""]);
      const same = await runCli(["escrow", "set", "--user", "alice", "--key-file", files.old, ...data, "--json"], env);
      expect([same.exitCode, JSON.parse(same.stdout)]).toEqual([
        0,
        expect.objectContaining({ outcome: "unchanged", replacedKeyUsage: null }),
      ]);

      for (const args of [["--key-file", files.new], ["--generate"]]) {
        const refused = await runCli(["escrow", "set", "--user", "alice", ...args, ...data], env);
        expect([refused.exitCode, refused.stdout, refused.stderr]).toEqual([
          1,
          "",
          expect.stringContaining(
            "mnemo: user 'alice' already has a different escrowed client key: 2 documents, 1 chat message and no notebook registries hold values sealed with it, " +
              "which escrow could no longer open; keep that key to read them, or pass --force to replace it",
          ),
        ]);
        expect(refused.stderr.trim().split("\n")).toHaveLength(1);
      }
      const status = await runCli(["escrow", "status", "--user", "alice", ...data, "--json"], env);
      expect(JSON.parse(status.stdout)).toMatchObject({ present: true, opens: true });

      const forced = await runCli(
        ["escrow", "set", "--user", "alice", "--key-file", files.new, "--force", ...data],
        env,
      );
      expect([forced.exitCode, forced.stdout, forced.stderr]).toEqual([
        0,
        "replaced the escrowed client key of alice (2 documents, 1 chat message and no notebook registries sealed with the old key no longer open through escrow)\n",
        "",
      ]);
      const after = await runCli(["escrow", "status", "--user", "alice", ...data, "--json"], env);
      expect(JSON.parse(after.stdout)).toMatchObject({ present: true, opens: true });
    } finally {
      await server.destroy();
    }
  });
});

describe("re-onboarding with a new clientKey", () => {
  let idp: Awaited<ReturnType<typeof startFakeIdp>>;
  let server: TestServer;
  beforeAll(async () => {
    idp = await startFakeIdp("mnemo-test");
    server = await start({ IDP_PROJECT_ID: idp.projectId, IDP_JWKS_URL: idp.jwksUrl, WEBHOOK_ID_ONBOARDING: ONBOARD });
  });
  afterAll(async () => {
    await server.destroy();
    idp.stop();
  });
  const onboard = async (sub: string, body: Record<string, unknown>) =>
    server.call("POST", `/api/v1/webhooks/${ONBOARD}/sync`, { token: await idp.sign({ sub }), body });

  test("is a 409 naming clientKey and what would become unreadable; nothing changes; the same key passes", async () => {
    const oldKey = randomBytes(32);
    expect(await onboard("reonb", { userName: "reonb_1", age: 20, clientKey: oldKey.toString("hex") })).toEqual([
      200,
      {
        ok: true,
        userId: "reonb",
        profile: { userName: "reonb_1", display_name: null, age: 20 },
        clientKeyEscrowed: true,
        encryptedBlobSaved: true,
      },
    ]);
    await sealSome(server, oldKey, "mock-token-reonb");
    const refused = await onboard("reonb", {
      userName: "reonb_2",
      age: 21,
      clientKey: randomBytes(32).toString("base64"),
    });
    expect(refused).toEqual([
      409,
      {
        error: {
          code: "conflict",
          message:
            "clientKey: a different client key is already escrowed for this user; replacing it would leave 2 documents, 1 chat message and no notebook registries " +
            "sealed with it unreadable through escrow. Send the escrowed key, or have an operator replace it with `mnemo escrow set --force`",
        },
      },
    ]);
    // Nothing was saved: neither the key nor the profile.
    expect(await server.services.escrow.get("reonb")).toEqual(oldKey);
    const [, me] = await server.call("GET", "/v1/me", { token: "mock-token-reonb" });
    expect(me.profile).toEqual({ userName: "reonb_1", display_name: null, age: 20 });
    // The escrowed key again (in another encoding) is accepted, and the profile updates.
    const same = await onboard("reonb", { userName: "reonb_2", clientKey: oldKey.toString("base64url") });
    expect(same).toEqual([
      200,
      {
        ok: true,
        userId: "reonb",
        profile: { userName: "reonb_2", display_name: null, age: 20 },
        clientKeyEscrowed: true,
        encryptedBlobSaved: true,
      },
    ]);
    expect(await server.services.escrow.get("reonb")).toEqual(oldKey);
  });

  test("another user's onboarding is not affected by this user's key (isolation)", async () => {
    const key = randomBytes(32);
    expect((await onboard("iso-a", { userName: "iso_a", clientKey: key.toString("hex") }))[0]).toBe(200);
    expect((await onboard("iso-b", { userName: "iso_b", clientKey: randomBytes(32).toString("hex") }))[0]).toBe(200);
    expect(await server.services.escrow.get("iso-a")).toEqual(key);
  });
});
