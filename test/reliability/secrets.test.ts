/**
 * Secrets (docs/reliability.md#secrets): a server process logging at debug level is driven with every
 * kind of credential and key the API takes (mock tokens, an API key, an IdP ID token,
 * the developer token the sync webhook hands out, client keys in X-Client-Key, the
 * `clientKey` query and request bodies, an escrowed client key, the master key, the
 * LLM gateway's and the embeddings provider's API keys, and made-up bearer tokens).
 * None of them may appear in anything it printed, nor in the data dir's files or the
 * PostgreSQL tables: keys are stored only as hashes (or sealed).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { databaseEnvFor, databaseUrlFor, dropDatabaseFor } from "../helpers/database";
import { startFakeIdp } from "../helpers/fake-idp";
import { startFakeUpstream } from "../helpers/fake-upstream";
import { tempDir } from "../helpers/server";
import { BACKEND, figure } from "./lib/mode";
import { childEnv, killChildren, LOGS, runCli, startChild } from "./lib/server-process";
import { waitFor } from "../helpers/wait";

const dataDir = tempDir("mnemo-secrets-");

/** Credentials by their shape, whoever's they are (`mock-token-<uid>` in the warning is a placeholder). */
const GENERIC_PATTERNS: Array<[string, RegExp]> = [
  ["mock token", /mock-token-[A-Za-z0-9_]/],
  ["bearer value", /Bearer\s+[A-Za-z0-9._~+/-]{8,}/i],
  ["API key", /svc_sk_(?:live|test)_[A-Za-z0-9_-]{16,}/],
  ["developer token", /svc_dev_[A-Za-z0-9_-]{16,}/],
  ["JWT", /eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\./],
];
afterAll(async () => {
  killChildren();
  rmSync(dataDir, { recursive: true, force: true });
  await dropDatabaseFor(dataDir);
});

/** Every file under a dir, with its bytes (the master key file excepted: it is the key). */
function filesUnder(dir: string): Array<{ path: string; bytes: Buffer }> {
  const out: Array<{ path: string; bytes: Buffer }> = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else if (name !== "master.key") out.push({ path, bytes: readFileSync(path) });
  }
  return out;
}

async function postgresText(dataDir: string): Promise<string> {
  const url = await databaseUrlFor(dataDir);
  if (!url) return "";
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'",
    );
    let text = "";
    for (const { table_name } of tables.rows) {
      const rows = await client.query(`SELECT t::text AS row FROM "${table_name}" t`);
      text += rows.rows.map((r) => r.row).join("\n");
    }
    return text;
  } finally {
    await client.end();
  }
}

describe(`secrets never logged nor stored in the clear (${BACKEND})`, () => {
  test("logs, data dir files and database rows hold no credential or key", async () => {
    const idp = await startFakeIdp("mnemo-secrets");
    const upstream = startFakeUpstream();
    const masterKey = randomBytes(32).toString("hex");
    const secrets: Record<string, string> = {
      masterKey,
      gatewayKey: `gw-${randomBytes(16).toString("hex")}`,
      embeddingsKey: `emb-${randomBytes(16).toString("hex")}`,
      mockToken: "mock-token-secret-user",
      madeUpApiKey: `svc_sk_live_${randomBytes(20).toString("hex")}`,
      madeUpBearer: `Zz${randomBytes(24).toString("base64url")}`,
    };
    const env = childEnv(dataDir, {
      ...(await databaseEnvFor(dataDir)),
      SERVER_MASTER_KEY: masterKey,
      IDP_PROJECT_ID: idp.projectId,
      IDP_JWKS_URL: idp.jwksUrl,
      WEBHOOK_ID_SYNC: "sync-hook",
      WEBHOOK_ID_ONBOARDING: "onboarding-hook",
      LLM_GATEWAY_URL: upstream.url,
      LLM_GATEWAY_API_KEY: secrets.gatewayKey,
      EMBEDDINGS_PROVIDER: "openai",
      EMBEDDINGS_URL: upstream.url,
      EMBEDDINGS_MODEL: "fake-embed",
      EMBEDDINGS_API_KEY: secrets.embeddingsKey,
    });
    try {
      const created = await runCli(["keys", "create", "--user", "secret-user", "--json", "--data", dataDir], env);
      expect(created.code).toBe(0);
      secrets.apiKey = JSON.parse(created.stdout).key;
      // The key is printed once, on purpose, by `keys create`: not a log line.
      LOGS.splice(LOGS.indexOf(created.stdout), 1);

      const server = await startChild(dataDir, env);
      const clientKey = randomBytes(32);
      secrets.clientKeyHex = clientKey.toString("hex");
      secrets.clientKeyBase64 = clientKey.toString("base64");
      secrets.clientKeyBase64Url = clientKey.toString("base64url");
      const escrowKey = randomBytes(32);
      secrets.escrowKeyHex = escrowKey.toString("hex");
      secrets.idToken = await idp.sign({ sub: "secret-user" });

      const call = async (
        method: string,
        path: string,
        token: string,
        body?: unknown,
        headers: Record<string, string> = {},
      ) => {
        const response = await fetch(server.url + path, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            ...(body === undefined ? {} : { "content-type": "application/json" }),
            ...headers,
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await response.text();
        try {
          return [response.status, JSON.parse(text)] as [number, any];
        } catch {
          return [response.status, text] as [number, any];
        }
      };
      // The IdP flow: onboarding escrows a client key; sync hands out a developer token.
      const [onboarded] = await call("POST", "/api/v1/webhooks/onboarding-hook/sync", secrets.idToken, {
        userName: "secret_user",
        clientKey: secrets.escrowKeyHex,
      });
      // With a temporary P-256 public key the sync also returns the escrowed key wrapped for it.
      const temp = generateKeyPairSync("ec", { namedCurve: "P-256" });
      const publicKey = (temp.publicKey.export({ format: "der", type: "spki" }) as Buffer).toString("base64");
      const [synced, sync] = await call("POST", "/api/v1/webhooks/sync-hook/sync", secrets.idToken, {
        client_temp_public_key: publicKey,
      });
      if (synced === 200 && typeof sync?.secret === "string") secrets.devToken = sync.secret;
      if (typeof sync?.wrapped_key === "string") secrets.wrappedKeyCiphertext = JSON.parse(sync.wrapped_key).ct;
      const statuses: Record<string, number> = { onboarding: onboarded, sync: synced };

      const [, ws] = await call("POST", "/v1/workspaces", secrets.apiKey, { name: "secrets" });
      const decrypt = { "x-proxy-decrypt": "true", "x-client-key": secrets.clientKeyHex };
      const requests: Array<[string, string, string, unknown?, Record<string, string>?]> = [
        ["POST", "/v1/memories", secrets.apiKey, { content: "a memory written with an API key" }],
        ["POST", "/v1/memories/search", secrets.apiKey, { query: "memory" }],
        [
          "POST",
          "/v1/documents",
          secrets.apiKey,
          {
            workspace_id: ws.id,
            id: "enc-doc",
            title: "sealed",
            markdown: "secret text",
            client_key: secrets.clientKeyBase64,
          },
        ],
        [
          "GET",
          `/v1/workspaces/${ws.id}/documents/enc-doc?clientKey=${encodeURIComponent(secrets.clientKeyBase64Url)}`,
          secrets.apiKey,
          undefined,
          { "x-proxy-decrypt": "true" },
        ],
        ["GET", `/v1/workspaces/${ws.id}/documents/enc-doc`, secrets.apiKey, undefined, decrypt],
        [
          "GET",
          `/v1/workspaces/${ws.id}/documents/enc-doc`,
          secrets.apiKey,
          undefined,
          { "x-proxy-decrypt": "true", "x-client-key": `not-a-key-${secrets.clientKeyHex.slice(0, 20)}` },
        ],
        ["GET", `/v1/workspaces/${ws.id}/documents`, secrets.mockToken, undefined, decrypt],
        [
          "POST",
          "/v1/chat/completions",
          secrets.apiKey,
          { model: "fake", messages: [{ role: "user", content: "hello" }] },
        ],
        ["GET", "/v1/usage", secrets.apiKey],
        ["GET", "/v1/me", secrets.idToken],
        ["GET", "/v1/me", secrets.madeUpApiKey],
        ["GET", "/v1/memories", secrets.madeUpBearer],
        ["GET", "/v1/memories", `${secrets.apiKey.slice(0, -4)}AAAA`],
        ["POST", "/v1/memories", secrets.mockToken, { content: "x".repeat(60_000) }],
      ];
      if (secrets.devToken) requests.push(["GET", "/v1/memories", secrets.devToken]);
      // The web app: a sign-in link (printed once by `mnemo open`, on purpose) and a pasted key,
      // each for a session cookie, used, refused without the app's header, and ended.
      const opened = await runCli(
        ["open", "--user", "secret-user", "--json", "--no-browser", "--data", dataDir, "--url", server.url],
        env,
      );
      LOGS.splice(LOGS.indexOf(opened.stdout), 1);
      secrets.linkToken = new URL(JSON.parse(opened.stdout).url).hash.replace("#signin=", "");
      const app = { "x-mnemo-app": "1", "content-type": "application/json" };
      for (const [name, body] of [
        ["sessionFromLink", { token: secrets.linkToken }],
        ["sessionFromKey", { apiKey: secrets.apiKey }],
      ] as const) {
        const signedIn = await fetch(`${server.url}/v1/app/session`, {
          method: "POST",
          headers: app,
          body: JSON.stringify(body),
        });
        statuses[`session ${name}`] = signedIn.status;
        secrets[name] = /mnemo_session=([^;]+)/.exec(signedIn.headers.get("set-cookie") ?? "")?.[1] ?? "";
        const cookie = `mnemo_session=${secrets[name]}`;
        await fetch(`${server.url}/v1/memories`, { headers: { cookie, "x-mnemo-app": "1" } });
        await fetch(`${server.url}/v1/memories`, {
          method: "POST",
          headers: { cookie, "content-type": "application/json" },
          body: "{}",
        });
        await fetch(`${server.url}/v1/app/session`, { method: "DELETE", headers: { cookie, "x-mnemo-app": "1" } });
      }
      await fetch(`${server.url}/v1/app/session`, {
        method: "POST",
        headers: app,
        body: JSON.stringify({ token: secrets.linkToken }),
      });
      for (const [i, [method, path, token, body, headers]] of requests.entries()) {
        const [status] = await call(method, path, token, body, headers);
        statuses[`${i} ${method} ${path.split("?")[0].replace(ws.id, ":ws")}`] = status;
      }
      // The indexer has embedded the memory (through the fake provider, with its key) before the stop.
      await waitFor(() => upstream.embedded.some((text) => text.includes("a memory written with an API key")), {
        what: "the indexer to embed the memory",
      });
      await server.kill("SIGTERM");

      // Derived forms of the invalid API key (the prefix alone is not secret).
      const logs = LOGS.join("");
      const inLogs = Object.entries(secrets)
        .filter(([, value]) => value && logs.includes(value))
        .map(([name]) => name);
      // And any credential of the other suites' servers in this process (crash loop, faults).
      for (const [name, pattern] of GENERIC_PATTERNS) {
        const hit = pattern.exec(logs);
        if (hit) inLogs.push(`${name}: …${logs.slice(Math.max(0, hit.index - 80), hit.index + 40)}…`);
      }
      const keys = Object.fromEntries(
        Object.entries(secrets).filter(([name]) => name !== "madeUpBearer" && name !== "madeUpApiKey"),
      );
      const stored: string[] = [];
      for (const { path, bytes } of filesUnder(dataDir)) {
        const text = bytes.toString("latin1");
        for (const [name, value] of Object.entries(keys))
          if (value && text.includes(value)) stored.push(`${name} in ${path.slice(dataDir.length)}`);
      }
      const database = await postgresText(dataDir);
      for (const [name, value] of Object.entries(keys))
        if (value && database.includes(value)) stored.push(`${name} in a PostgreSQL row`);
      figure(
        "secrets",
        `${Object.keys(secrets).length} secrets, ${logs.length} bytes of logs, ${filesUnder(dataDir).length} files${database ? " and the PostgreSQL tables" : ""} scanned; found in logs: ${inLogs.length}, stored in the clear: ${stored.length} (statuses ${JSON.stringify(statuses)})`,
      );
      expect({ inLogs, stored }).toEqual({ inLogs: [], stored: [] });
      // The credentials did work (a scan of a server that refused everything proves little).
      expect([
        statuses["0 POST /v1/memories"],
        statuses["2 POST /v1/documents"],
        statuses.onboarding,
        statuses.sync,
      ]).toEqual([201, 201, 200, 200]);
      expect([
        statuses["session sessionFromLink"],
        statuses["session sessionFromKey"],
        secrets.sessionFromLink.length,
        secrets.sessionFromKey.length,
      ]).toEqual([200, 200, 43, 43]);
      expect(secrets.wrappedKeyCiphertext).toBeString();
    } finally {
      idp.stop();
      upstream.stop();
    }
  }, 120_000);
});
