/**
 * `GET /health`'s details: anyone gets liveness; a user's credential (any scope) only that
 * user's waiting changes and extraction jobs; the server's own details (index location,
 * replica ids, the last write error, counts over all users) only an operator's credential,
 * made with `mnemo keys create --operator`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { run, sql } from "../src/db/store";
import { runCli } from "./helpers/cli";
import { TEST_DATABASE_URL } from "./helpers/database";
import { startTestServer, type TestServer } from "./helpers/server";

const backend = TEST_DATABASE_URL ? "PostgreSQL" : "the embedded store";
let server: TestServer;
let operatorKey: string;
/** When the stranger's waiting change was written. */
const strangerChangeAt = Date.now();

beforeAll(async () => {
  server = await startTestServer();
  const created = await runCli([
    "keys",
    "create",
    "--user",
    "ops",
    "--operator",
    "--name",
    "monitoring",
    "--json",
    "--data",
    server.dataDir,
  ]);
  expect([created.exitCode, created.stderr]).toEqual([0, ""]);
  operatorKey = JSON.parse(created.stdout).key;
  // Another user's waiting change (due only far in the future, so it stays waiting) and failed extraction job.
  const db = server.services.store.db;
  await run(
    db,
    sql`INSERT INTO outbox (owner_id, kind, source_id, op, stage, available_at, created_at) VALUES (${"stranger"}, ${"memory"}, ${"mem_gone"}, ${"sync"}, ${"text"}, ${8e15}, ${strangerChangeAt})`,
  );
  const at = new Date().toISOString();
  await run(
    db,
    sql`INSERT INTO formation_jobs (owner_id, thread_workspace_id, thread_id, message_ids, status, created_at, updated_at)
                    VALUES (${"stranger"}, ${"ws_x"}, ${"thr_x"}, ${"[]"}, ${"failed"}, ${at}, ${at})`,
  );
});
afterAll(async () => {
  // The stranger's change would never be due: it goes before the server drains its outbox.
  await run(server.services.store.db, sql`DELETE FROM outbox WHERE owner_id = ${"stranger"}`);
  await server?.destroy();
});

const health = async (authorization?: string) =>
  server.call("GET", "/health", {
    token: null,
    headers: authorization ? { authorization: `Bearer ${authorization}` } : {},
  });
const SERVER_FIELDS = [
  "uri",
  "writer",
  "replicaId",
  "writerId",
  "lastIndexedAt",
  "lastError",
  "failingSince",
  "consecutiveFailures",
];

describe(`/health on ${backend}`, () => {
  test("without a credential: liveness only", async () => {
    expect(await health()).toEqual([
      200,
      { status: expect.stringMatching(/^(ok|degraded)$/), store: expect.any(String) },
    ]);
  });

  test("a user's credential sees only that user's waiting changes and jobs, nothing about the server", async () => {
    const reader = await server.services.credentials.createApiKey({ userId: "hana", scopes: ["usage:read"] });
    const dev = await server.services.credentials.createDevToken({ userId: "stranger", ttlMs: 3_600_000 });
    const [status, own] = await health(reader.key);
    expect([status, own.index, own.extractionJobs]).toEqual([
      200,
      { status: expect.any(String), pending: 0, pendingVectors: 0, oldestPendingAt: null },
      { pending: 0, running: 0, failed: 0 },
    ]);
    const [, stranger] = await health(dev.token);
    expect([stranger.index, stranger.extractionJobs]).toEqual([
      {
        status: expect.any(String),
        pending: 1,
        pendingVectors: 0,
        oldestPendingAt: new Date(strangerChangeAt).toISOString(),
      },
      { pending: 0, running: 0, failed: 1 },
    ]);
    expect(JSON.stringify([own, stranger])).not.toContain(server.dataDir);
    // An invalid credential is refused, not ignored.
    expect((await health("svc_sk_live_notakeyatall0000000000000000000000"))[0]).toBe(401);
  });

  test("an operator key (`mnemo keys create --operator`) sees the server's details, and reads no user's data", async () => {
    const [status, body] = await health(operatorKey);
    expect(status).toBe(200);
    expect(Object.keys(body.index)).toEqual(expect.arrayContaining(SERVER_FIELDS));
    expect(body.index.replicaId).toBe((await server.services.indexer.health()).replicaId);
    expect(body.index.pending).toBeGreaterThanOrEqual(1);
    expect(body.extractionJobs.failed).toBeGreaterThanOrEqual(1);
    expect((await server.call("GET", "/v1/memories", { token: operatorKey }))[0]).toBe(403);
    // Listed with its scope to its holder; never made over HTTP.
    const listed = await runCli(["keys", "list", "--user", "ops", "--json", "--data", server.dataDir]);
    expect(JSON.parse(listed.stdout).map((k: { scopes: string[] }) => k.scopes)).toEqual([["operator"]]);
    const [refused] = await server.call("POST", "/v1/keys", {
      token: "mock-token-hana",
      body: { name: "x", scopes: ["operator"] },
    });
    expect(refused).toBe(400);
    const both = await runCli([
      "keys",
      "create",
      "--user",
      "ops",
      "--operator",
      "--scopes",
      "chat",
      "--data",
      server.dataDir,
    ]);
    expect([both.exitCode, both.stderr]).toEqual([
      1,
      expect.stringContaining("--operator: an operator key carries only the operator scope"),
    ]);
  });

  test("a web app session made from a user's key sees what the key does; one from the operator's key, the server's details", async () => {
    const key = await server.services.credentials.createApiKey({ userId: "hana", scopes: ["memory:read"] });
    for (const [apiKey, operator] of [
      [key.key, false],
      [operatorKey, true],
    ] as const) {
      const signIn = await fetch(`${server.url}/v1/app/session`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-mnemo-app": "1" },
        body: JSON.stringify({ apiKey }),
      });
      const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0];
      const [, body] = await server.call("GET", "/health", { token: null, headers: { cookie, "x-mnemo-app": "1" } });
      expect([operator, SERVER_FIELDS.filter((field) => field in body.index)]).toEqual([
        operator,
        operator ? SERVER_FIELDS : [],
      ]);
    }
  });
});
