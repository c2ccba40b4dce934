import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { loadConfig } from "../src/config";
import { all, run, sql } from "../src/db/store";
import { createLogger } from "../src/lib/log";
import { startServer } from "../src/server";
import { databaseEnvFor } from "./helpers/database";
import { startFakeIdp } from "./helpers/fake-idp";
import { tempDir, withClient, type TestServer } from "./helpers/server";

const SYNC = "sync-hook-1";
const ONBOARD = "onboard-hook-1";
const logLines: string[] = [];
const secrets: string[] = [];

let idp: Awaited<ReturnType<typeof startFakeIdp>>;
let server: TestServer;

beforeAll(async () => {
  idp = await startFakeIdp("mnemo-test");
  const dataDir = tempDir();
  const env = {
    EMBEDDINGS_PROVIDER: "none",
    IDP_PROJECT_ID: idp.projectId,
    IDP_JWKS_URL: idp.jwksUrl,
    WEBHOOK_ID_SYNC: SYNC,
    WEBHOOK_ID_ONBOARDING: ONBOARD,
    ...(await databaseEnvFor(dataDir)),
  };
  const config = loadConfig({ dataDir, port: 0, allowMockTokens: true, logLevel: "debug" }, env);
  server = withClient(
    await startServer(config, { log: createLogger("debug", (line) => logLines.push(line)) }),
    dataDir,
  );
});
afterAll(async () => {
  await server.destroy();
  idp.stop();
});

const hook = (id: string, token: string | null, body: unknown = {}) =>
  server.call("POST", `/api/v1/webhooks/${id}/sync`, { token, body });
const idToken = (sub: string) => idp.sign({ sub });
const err = (code: string, message: string) => ({ error: { code, message } });

/** The browser side: a temporary ECDH P-256 key pair, and the unwrap of `wrapped_key` with WebCrypto only. */
async function browserKeyPair() {
  const pair = (await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, [
    "deriveBits",
  ])) as CryptoKeyPair;
  const spki = Buffer.from(await crypto.subtle.exportKey("spki", pair.publicKey)).toString("base64");
  const jwk = await crypto.subtle.exportKey("jwk", pair.publicKey);
  const raw = Buffer.from(await crypto.subtle.exportKey("raw", pair.publicKey)).toString("base64");
  async function unwrap(wrappedKey: string): Promise<Buffer> {
    const { v, alg, epk, iv, ct } = JSON.parse(wrappedKey);
    expect([v, alg]).toEqual([1, "ECDH-ES+P-256+HKDF-SHA256+A256GCM"]);
    const serverKey = await crypto.subtle.importKey(
      "spki",
      Buffer.from(epk, "base64"),
      { name: "ECDH", namedCurve: "P-256" },
      false,
      [],
    );
    const shared = await crypto.subtle.deriveBits({ name: "ECDH", public: serverKey }, pair.privateKey, 256);
    const hkdfKey = await crypto.subtle.importKey("raw", shared, "HKDF", false, ["deriveKey"]);
    const aesKey = await crypto.subtle.deriveKey(
      {
        name: "HKDF",
        hash: "SHA-256",
        salt: new Uint8Array(0),
        info: new TextEncoder().encode("mnemo-wrapped-key-v1"),
      },
      hkdfKey,
      { name: "AES-GCM", length: 256 },
      false,
      ["decrypt"],
    );
    return Buffer.from(
      await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: Buffer.from(iv, "base64") },
        aesKey,
        Buffer.from(ct, "base64"),
      ),
    );
  }
  return { spki, jwk, raw, unwrap };
}

describe("authentication and routing", () => {
  test("an unknown webhook id is a 404, whatever the token", async () => {
    expect(await hook("nope", await idToken("u1"))).toEqual([404, err("not_found", "webhook 'nope' not found")]);
    expect(await hook("nope", null)).toEqual([404, err("not_found", "webhook 'nope' not found")]);
  });

  test("API keys, developer tokens and mock tokens are refused with 401; a missing or forged token too", async () => {
    const refused = err(
      "unauthorized",
      "this webhook requires an identity-provider ID token; API keys, developer tokens and mock tokens are refused",
    );
    const dev = await server.services.credentials.createDevToken({ userId: "u1", ttlMs: 60_000 });
    const key = await server.services.credentials.createApiKey({ userId: "u1", scopes: ["memory:read"] });
    secrets.push(dev.token, key.key);
    for (const id of [SYNC, ONBOARD]) {
      for (const token of ["mock-token-u1", "svc_sk_mock_u1", "svc_dev_mock_u1", dev.token, key.key])
        expect(await hook(id, token, { userName: "abc" })).toEqual([401, refused]);
      expect((await hook(id, null))[0]).toBe(401);
      expect((await hook(id, await idp.sign({ sub: "u1", wrongKey: true })))[1]).toEqual(
        err("unauthorized", "invalid token: signature verification failed"),
      );
    }
  });
});

describe("onboarding", () => {
  test("validates the username, display name, age and client key, naming the field", async () => {
    const token = await idToken("val-user");
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, "userName: must be 3–32 characters of a–z, 0–9 and _"],
      [{ userName: "ab" }, "userName: must be 3–32 characters of a–z, 0–9 and _"],
      [{ userName: "a".repeat(33) }, "userName: must be 3–32 characters of a–z, 0–9 and _"],
      [{ userName: "bad-name" }, "userName: must be 3–32 characters of a–z, 0–9 and _"],
      [{ userName: "good_1", age: 151 }, "age: must be an integer from 0 to 150"],
      [{ userName: "good_1", age: -1 }, "age: must be an integer from 0 to 150"],
      [{ userName: "good_1", age: 3.5 }, "age: must be an integer from 0 to 150"],
      [{ userName: "good_1", age: "30" }, "age: must be an integer from 0 to 150"],
      [
        { userName: "good_1", display_name: "x".repeat(101) },
        "display_name: must be a string of at most 100 characters, or null",
      ],
      [
        { userName: "good_1", clientKey: "not-a-key" },
        "clientKey: must be a 32-byte key as 64 hex characters or base64/base64url",
      ],
    ];
    for (const [body, message] of cases)
      expect([body, await hook(ONBOARD, token, body)]).toEqual([body, [400, err("invalid_request", message)]]);
    // Nothing was saved by the refused requests.
    expect((await hook(SYNC, token))[1].status).toBe("new_user");
  });

  test("saves the profile, escrows the client key, and re-onboarding updates; usernames are unique without regard to case", async () => {
    const clientKey = randomBytes(32);
    secrets.push(clientKey.toString("hex"), clientKey.toString("base64"));
    const token = await idToken("onb-user");
    expect(
      await hook(ONBOARD, token, {
        userName: "Alice_1",
        display_name: "Alice",
        age: 30,
        clientKey: clientKey.toString("base64url"),
      }),
    ).toEqual([
      200,
      {
        ok: true,
        userId: "onb-user",
        profile: { userName: "Alice_1", display_name: "Alice", age: 30 },
        clientKeyEscrowed: true,
        encryptedBlobSaved: true,
      },
    ]);
    expect(await server.services.escrow.get("onb-user")).toEqual(clientKey);
    // Re-onboarding: fields left out keep their values; no key sent, the escrowed one stays.
    expect(await hook(ONBOARD, token, { userName: "alice_2", age: 31 })).toEqual([
      200,
      {
        ok: true,
        userId: "onb-user",
        profile: { userName: "alice_2", display_name: "Alice", age: 31 },
        clientKeyEscrowed: true,
        encryptedBlobSaved: false,
      },
    ]);
    // The user may change the case of their own name.
    expect((await hook(ONBOARD, token, { userName: "ALICE_2" }))[0]).toBe(200);
    const other = await idToken("other-user");
    expect(await hook(ONBOARD, other, { userName: "alice_2" })).toEqual([
      409,
      err("conflict", "userName: 'alice_2' is taken"),
    ]);
    expect(await hook(ONBOARD, other, { userName: "Alice_2", display_name: null })).toEqual([
      409,
      err("conflict", "userName: 'Alice_2' is taken"),
    ]);
    expect((await hook(ONBOARD, other, { userName: "alice_1" }))[0]).toBe(200);
  });
});

describe("sync and /v1/me", () => {
  test("status moves new_user → incomplete_profile → missing_key → complete; the secret is a working 24 h developer token", async () => {
    const token = await idToken("sync-user");
    const [status, first] = await hook(SYNC, token, {});
    expect([status, first]).toEqual([
      200,
      {
        secret: expect.stringMatching(/^svc_dev_/),
        userId: "sync-user",
        status: "new_user",
        profile: { userName: null, display_name: null, age: null },
        wrapped_key: null,
        debug_log: expect.stringContaining("no profile yet"),
      },
    ]);
    secrets.push(first.secret);
    const issued = await all<{ expires_at: string; created_at: string }>(
      server.services.store.db,
      sql`SELECT expires_at, created_at FROM dev_tokens WHERE user_id = ${"sync-user"}`,
    );
    expect(issued.map((r) => Date.parse(r.expires_at) - Date.parse(r.created_at))).toEqual([24 * 60 * 60 * 1000]);
    const [meStatus, me] = await server.call("GET", "/v1/me", { token: first.secret });
    expect([meStatus, me]).toEqual([
      200,
      {
        ok: true,
        userId: "sync-user",
        profile: { userName: null, display_name: null, age: null },
        clientKeyEscrow: { present: false },
        verifiedAt: expect.any(String),
      },
    ]);

    // A profile without a username (e.g. created before onboarding finished).
    await run(
      server.services.store.db,
      sql`INSERT INTO profiles (user_id, user_name, display_name, age, created_at, updated_at)
                                            VALUES (${"sync-user"}, ${null}, ${"S"}, ${null}, ${"2026-01-01T00:00:00Z"}, ${"2026-01-01T00:00:00Z"})`,
    );
    expect((await hook(SYNC, token))[1].status).toBe("incomplete_profile");
    await hook(ONBOARD, token, { userName: "sync_user", age: 40 });
    const browser = await browserKeyPair();
    const missing = (await hook(SYNC, token, { client_temp_public_key: browser.spki }))[1];
    expect([missing.status, missing.wrapped_key]).toEqual(["missing_key", null]);

    const clientKey = randomBytes(32);
    secrets.push(clientKey.toString("hex"), clientKey.toString("base64"));
    await hook(ONBOARD, token, { userName: "sync_user", clientKey: clientKey.toString("hex") });
    for (const publicKey of [browser.spki, browser.jwk, JSON.stringify(browser.jwk), browser.raw]) {
      const [code, done] = await hook(SYNC, token, { client_temp_public_key: publicKey });
      expect([code, done.status, done.profile]).toEqual([
        200,
        "complete",
        { userName: "sync_user", display_name: "S", age: 40 },
      ]);
      expect(await browser.unwrap(done.wrapped_key)).toEqual(clientKey);
      expect(done.debug_log).not.toContain(clientKey.toString("hex"));
      secrets.push(done.secret);
    }
    // Without a public key there is nothing to wrap for.
    expect((await hook(SYNC, token, {}))[1]).toMatchObject({ status: "complete", wrapped_key: null });
    expect(await hook(SYNC, token, { client_temp_public_key: "AAAA" })).toEqual([
      400,
      err(
        "invalid_request",
        "client_temp_public_key: must be a P-256 public key as a JWK or base64 SPKI (or base64 raw point)",
      ),
    ]);

    const [, meAfter] = await server.call("GET", "/v1/me", { token: await idToken("sync-user") });
    expect(meAfter).toMatchObject({
      ok: true,
      profile: { userName: "sync_user", display_name: "S", age: 40 },
      clientKeyEscrow: { present: true },
    });
    expect(Date.parse(meAfter.verifiedAt)).not.toBeNaN();
  });

  test("a developer token from sync acts only for its user", async () => {
    const [, a] = await hook(SYNC, await idToken("iso-a"), {});
    const [, ws] = await server.call("POST", "/v1/workspaces", { token: a.secret, body: { name: "A's" } });
    const [, b] = await hook(SYNC, await idToken("iso-b"), {});
    secrets.push(a.secret, b.secret);
    expect((await server.call("GET", `/v1/workspaces/${ws.id}`, { token: b.secret }))[0]).toBe(404);
    expect((await server.call("GET", `/v1/workspaces/${ws.id}`, { token: a.secret }))[0]).toBe(200);
  });

  test("syncing again and again keeps at most 5 live sign-in tokens per user: the oldest are revoked, expired ones deleted", async () => {
    const token = await idToken("many-syncs");
    const cli = await server.services.credentials.createDevToken({ userId: "many-syncs", ttlMs: 60_000 });
    const [, other] = await hook(SYNC, await idToken("other-syncer"), {});
    const issued: string[] = [];
    for (let i = 0; i < 7; i++) issued.push((await hook(SYNC, token, {}))[1].secret);
    secrets.push(cli.token, other.secret, ...issued);
    const statusOf = async (secret: string) => (await server.call("GET", "/v1/memories", { token: secret }))[0];
    expect(await Promise.all(issued.map(statusOf))).toEqual([401, 401, 200, 200, 200, 200, 200]);
    expect(await server.call("GET", "/v1/memories", { token: issued[0] })).toEqual([
      401,
      err("unauthorized", "invalid developer token (unknown, or revoked)"),
    ]);
    // A token from `mnemo dev-token create`, and another user's sign-in token, are not touched.
    expect([await statusOf(cli.token), await statusOf(other.secret)]).toEqual([200, 200]);
    // Revoked by deleting: no row of a revoked sign-in token is left.
    const rowsLeft = sql`SELECT COUNT(*) AS n FROM dev_tokens WHERE user_id = ${"many-syncs"}`;
    expect(Number((await all<{ n: number }>(server.services.store.db, rowsLeft))[0].n)).toBe(6);

    // Once expired, a sign-in token's row is deleted at the next sync.
    await run(
      server.services.store.db,
      sql`UPDATE dev_tokens SET expires_at = ${"2000-01-01T00:00:00.000Z"} WHERE user_id = ${"many-syncs"} AND issued_by = ${"sync"}`,
    );
    const [, next] = await hook(SYNC, token, {});
    secrets.push(next.secret);
    const rows = await all<{ issued_by: string | null }>(
      server.services.store.db,
      sql`SELECT issued_by FROM dev_tokens WHERE user_id = ${"many-syncs"} ORDER BY issued_by`,
    );
    expect(rows.map((r) => r.issued_by).sort()).toEqual([null, "sync"].sort());
    expect(next.debug_log).toContain("issued a developer token valid 24 h");
  });
});

test("no client key or issued token reached the logs of this file", () => {
  expect(logLines.length).toBeGreaterThan(0);
  expect(logLines.filter((line) => secrets.some((secret) => line.includes(secret)))).toEqual([]);
});
