/**
 * A web app session lives no longer than the credential it came from: revoking a developer
 * token (by `mnemo dev-token revoke`, by its owner over HTTP, or by the identity sync's cap)
 * ends its sessions. Developer tokens are listed and revoked by the CLI and their owner.
 * And rows stay bounded: at most 20 sessions per user, no pile of revoked sync tokens.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_SESSIONS_PER_USER } from "../src/auth/app-sessions";
import { all, sql } from "../src/db/store";
import { MAX_SYNC_DEV_TOKENS } from "../src/identity/service";
import { runCli } from "./helpers/cli";
import { TEST_DATABASE_URL } from "./helpers/database";
import { startTestServer, type TestServer } from "./helpers/server";

const backend = TEST_DATABASE_URL ? "PostgreSQL" : "the embedded store";
const APP = { "x-mnemo-app": "1" };
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.destroy());

/** Signs in with a pasted credential; returns the cookie pair (`mnemo_session=…`). */
async function sessionFrom(apiKey: string): Promise<string> {
  const response = await fetch(`${server.url}/v1/app/session`, {
    method: "POST",
    headers: { "content-type": "application/json", ...APP },
    body: JSON.stringify({ apiKey }),
  });
  expect(response.status).toBe(200);
  return (response.headers.get("set-cookie") ?? "").split(";")[0];
}
const withSession = (cookie: string) => ({ token: null, headers: { cookie, ...APP } });
const count = async (query: ReturnType<typeof sql>) =>
  Number((await all<{ n: number }>(server.services.store.db, query))[0].n);

describe(`a session ends with its developer token on ${backend}`, () => {
  test("revoked with `mnemo dev-token revoke`: the session is refused at once and can no longer make a key", async () => {
    const dev = await server.services.credentials.createDevToken({ userId: "dana", ttlMs: 3_600_000 });
    const cookie = await sessionFrom(dev.token);
    expect((await server.call("GET", "/v1/memories", withSession(cookie)))[0]).toBe(200);

    const revoked = await runCli(["dev-token", "revoke", dev.id, "--data", server.dataDir]);
    expect(revoked).toEqual({ exitCode: 0, stdout: `revoked ${dev.id}\n`, stderr: "" });
    expect((await server.call("GET", "/v1/memories", withSession(cookie)))[0]).toBe(401);
    const [status, body] = await server.call("POST", "/v1/keys", {
      ...withSession(cookie),
      body: { name: "successor" },
    });
    expect([status, body.error.message]).toEqual([401, expect.stringContaining("session has ended")]);
    expect(await server.services.credentials.listApiKeys("dana")).toEqual([]);
  });

  test("revoked by the identity sync's cap, or its row deleted: its sessions end too", async () => {
    const first = await server.services.credentials.issueSyncDevToken({
      userId: "sid",
      ttlMs: 3_600_000,
      keep: MAX_SYNC_DEV_TOKENS,
    });
    const cookie = await sessionFrom(first.token);
    expect((await server.call("GET", "/v1/memories", withSession(cookie)))[0]).toBe(200);
    for (let i = 0; i < MAX_SYNC_DEV_TOKENS; i++)
      await server.services.credentials.issueSyncDevToken({
        userId: "sid",
        ttlMs: 3_600_000,
        keep: MAX_SYNC_DEV_TOKENS,
      });
    // Revoked by deleting its row.
    expect(await count(sql`SELECT COUNT(*) AS n FROM dev_tokens WHERE id = ${first.id}`)).toBe(0);
    expect((await server.call("GET", "/v1/memories", { token: first.token }))[0]).toBe(401);
    expect((await server.call("GET", "/v1/memories", withSession(cookie)))[0]).toBe(401);
  });
});

describe(`developer tokens are listed and revoked by their owner and the operator on ${backend}`, () => {
  test("`mnemo dev-token list` shows tokens without secrets; revoke says when a token was unknown or already revoked", async () => {
    const a = await server.services.credentials.createDevToken({ userId: "lister", ttlMs: 3_600_000 });
    const b = await server.services.credentials.createDevToken({ userId: "lister", ttlMs: 3_600_000 });
    await server.services.credentials.createDevToken({ userId: "someone-else", ttlMs: 3_600_000 });
    expect((await runCli(["dev-token", "revoke", b.id, "--data", server.dataDir, "--json"])).stdout).toBe(
      `${JSON.stringify({ id: b.id, revoked: true, alreadyRevoked: false }, null, 2)}\n`,
    );
    const listed = await runCli(["dev-token", "list", "--user", "lister", "--json", "--data", server.dataDir]);
    expect([listed.exitCode, listed.stderr]).toEqual([0, ""]);
    expect(JSON.parse(listed.stdout)).toEqual([
      {
        id: a.id,
        userId: "lister",
        prefix: a.token.slice(0, 16),
        createdAt: a.createdAt,
        expiresAt: a.expiresAt,
        revokedAt: null,
        issuedBy: null,
      },
      {
        id: b.id,
        userId: "lister",
        prefix: b.token.slice(0, 16),
        createdAt: b.createdAt,
        expiresAt: b.expiresAt,
        revokedAt: expect.any(String),
        issuedBy: null,
      },
    ]);
    expect(listed.stdout).not.toContain(a.token);
    const table = await runCli(["dev-token", "list", "--user", "lister", "--data", server.dataDir]);
    expect([table.exitCode, table.stdout.split("\n").filter((line) => line.includes("dev_")).length]).toEqual([0, 2]);
    expect(await runCli(["dev-token", "revoke", b.id, "--data", server.dataDir])).toEqual({
      exitCode: 0,
      stdout: `${b.id} was already revoked\n`,
      stderr: "",
    });
    const unknown = await runCli(["dev-token", "revoke", "dev_nope", "--data", server.dataDir]);
    expect([unknown.exitCode, unknown.stdout, unknown.stderr]).toEqual([
      1,
      "",
      expect.stringContaining("no developer token with id 'dev_nope'"),
    ]);
  });

  test("GET and DELETE /v1/dev-tokens: the owner's live tokens only; another user's answers 404; an API key cannot", async () => {
    const own = await server.services.credentials.createDevToken({ userId: "owner", ttlMs: 3_600_000 });
    const lost = await server.services.credentials.createDevToken({ userId: "owner", ttlMs: 3_600_000 });
    const theirs = await server.services.credentials.createDevToken({ userId: "stranger", ttlMs: 3_600_000 });
    const lostSession = await sessionFrom(lost.token);
    const [, listed] = await server.call("GET", "/v1/dev-tokens", { token: own.token });
    expect(listed).toEqual({
      data: [own, lost].map((t) => ({
        id: t.id,
        prefix: t.token.slice(0, 16),
        issuedBy: null,
        createdAt: t.createdAt,
        expiresAt: t.expiresAt,
      })),
    });
    expect(await server.call("DELETE", `/v1/dev-tokens/${theirs.id}`, { token: own.token })).toEqual([
      404,
      { error: { code: "not_found", message: expect.stringContaining(theirs.id) } },
    ]);
    expect((await server.call("GET", "/v1/memories", { token: theirs.token }))[0]).toBe(200);

    expect(await server.call("DELETE", `/v1/dev-tokens/${lost.id}`, { token: own.token })).toEqual([
      200,
      { id: lost.id, revoked: true },
    ]);
    expect((await server.call("GET", "/v1/memories", { token: lost.token }))[0]).toBe(401);
    expect((await server.call("GET", "/v1/memories", withSession(lostSession)))[0]).toBe(401);
    expect(
      (await server.call("GET", "/v1/dev-tokens", { token: own.token }))[1].data.map((t: { id: string }) => t.id),
    ).toEqual([own.id]);
    expect((await server.call("DELETE", `/v1/dev-tokens/${lost.id}`, { token: own.token }))[0]).toBe(404);

    const key = await server.services.credentials.createApiKey({ userId: "owner", scopes: ["memory:read"] });
    expect((await server.call("GET", "/v1/dev-tokens", { token: key.key }))[0]).toBe(403);
    expect((await server.call("DELETE", `/v1/dev-tokens/${own.id}`, { token: key.key }))[0]).toBe(403);
  });
});

describe(`rows stay bounded on ${backend}`, () => {
  test(`at most ${MAX_SESSIONS_PER_USER} live sessions per user: signing in beyond them ends the oldest`, async () => {
    const cookies: string[] = [];
    for (let i = 0; i < MAX_SESSIONS_PER_USER + 5; i++) cookies.push(await sessionFrom("mock-token-busy"));
    expect(await count(sql`SELECT COUNT(*) AS n FROM app_sessions WHERE user_id = ${"busy"}`)).toBe(
      MAX_SESSIONS_PER_USER,
    );
    const statuses = await Promise.all(
      cookies.map(async (cookie) => (await server.call("GET", "/v1/me", withSession(cookie)))[0]),
    );
    // The oldest went (sessions signed in within one millisecond may go in either order).
    expect({ ended: statuses.filter((s) => s === 401).length, first: statuses[0], last: statuses.at(-1) }).toEqual({
      ended: 5,
      first: 401,
      last: 200,
    });
    // Another user's sessions are not counted or touched.
    const other = await sessionFrom("mock-token-calm");
    expect((await server.call("GET", "/v1/me", withSession(other)))[0]).toBe(200);
    expect((await server.call("GET", "/v1/me", withSession(cookies.at(-1)!)))[0]).toBe(200);
  });

  test("sign-in tokens the identity sync revokes do not pile up: their rows are deleted, and so are ones revoked by hand", async () => {
    const handRevoked = await server.services.credentials.issueSyncDevToken({
      userId: "syncer",
      ttlMs: 3_600_000,
      keep: MAX_SYNC_DEV_TOKENS,
    });
    expect(await server.services.credentials.revokeDevToken(handRevoked.id)).toBe("revoked");
    for (let i = 0; i < 30; i++)
      await server.services.credentials.issueSyncDevToken({
        userId: "syncer",
        ttlMs: 3_600_000,
        keep: MAX_SYNC_DEV_TOKENS,
      });
    const rows = await all<{ revoked_at: string | null }>(
      server.services.store.db,
      sql`SELECT revoked_at FROM dev_tokens WHERE user_id = ${"syncer"}`,
    );
    expect(rows).toEqual(Array(MAX_SYNC_DEV_TOKENS).fill({ revoked_at: null }));
  });
});
