import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeIdp } from "./helpers/fake-idp";
import { startTestServer, type TestServer } from "./helpers/server";

let server: TestServer;
let idp: Awaited<ReturnType<typeof startFakeIdp>>;

beforeAll(async () => {
  idp = await startFakeIdp("mnemo-test");
  server = await startTestServer({ env: { IDP_PROJECT_ID: idp.projectId, IDP_JWKS_URL: idp.jwksUrl } });
});
afterAll(async () => {
  await server.destroy();
  idp.stop();
});

const unauthorized = (message: string | RegExp): [number, unknown] => [
  401,
  { error: { code: "unauthorized", message: expect.stringMatching(message) } },
];

describe("bearer resolution", () => {
  test("no Authorization header is 401 unauthorized", async () => {
    expect(await server.call("GET", "/v1/memories", { token: null })).toEqual(
      unauthorized(/missing Authorization header/),
    );
  });

  test("a non-Bearer header is 401", async () => {
    expect(await server.call("GET", "/v1/memories", { token: null, headers: { authorization: "Basic abc" } })).toEqual(
      unauthorized(/malformed Authorization/),
    );
  });

  test("authentication comes before body validation", async () => {
    expect(await server.call("POST", "/v1/memories", { token: null, body: { wrong: true } })).toEqual(
      unauthorized(/missing Authorization/),
    );
  });

  test("garbage is verified as an ID token and rejected", async () => {
    expect(await server.call("GET", "/v1/memories", { token: "garbage" })).toEqual(
      unauthorized(/invalid token: not a valid JWT/),
    );
  });

  test("live and test API keys work, scoped to their user", async () => {
    const live = await server.services.credentials.createApiKey({
      userId: "key-user",
      scopes: ["memory:read", "memory:write"],
    });
    const testKey = await server.services.credentials.createApiKey({
      userId: "key-user",
      scopes: ["memory:read"],
      test: true,
    });
    expect(live.key).toMatch(/^svc_sk_live_[0-9A-Za-z]{40}$/);
    expect(testKey.key).toMatch(/^svc_sk_test_[0-9A-Za-z]{40}$/);
    const [status, created] = await server.call("POST", "/v1/memories", {
      token: live.key,
      body: { content: "via key" },
    });
    expect([status, created.ownerId]).toEqual([201, "key-user"]);
    const [listStatus, list] = await server.call("GET", "/v1/memories", { token: testKey.key });
    expect([listStatus, list.data.map((m: { id: string }) => m.id)]).toEqual([200, [created.id]]);
  });

  test("a key with a wrong secret but a real lookup id is rejected", async () => {
    const { key } = await server.services.credentials.createApiKey({ userId: "u", scopes: ["memory:read"] });
    const forged = key.slice(0, -4) + (key.endsWith("AAAA") ? "BBBB" : "AAAA");
    expect(await server.call("GET", "/v1/memories", { token: forged })).toEqual(unauthorized(/invalid API key/));
    expect(await server.call("GET", "/v1/memories", { token: "svc_sk_live_nope" })).toEqual(
      unauthorized(/invalid API key/),
    );
  });

  test("a revoked key stops working at once", async () => {
    const { key, id } = await server.services.credentials.createApiKey({ userId: "u", scopes: ["memory:read"] });
    expect((await server.call("GET", "/v1/memories", { token: key }))[0]).toBe(200);
    expect(await server.services.credentials.revokeApiKey(id)).toBe("revoked");
    expect(await server.call("GET", "/v1/memories", { token: key })).toEqual(unauthorized(/revoked/));
  });

  test("dev tokens work until they expire", async () => {
    const valid = await server.services.credentials.createDevToken({ userId: "dev-user", ttlMs: 60_000 });
    const expired = await server.services.credentials.createDevToken({ userId: "dev-user", ttlMs: -1 });
    expect(valid.token).toMatch(/^svc_dev_[0-9A-Za-z]{40}$/);
    const [status, me] = await server.call("GET", "/v1/me", { token: valid.token });
    expect([status, me.userId]).toEqual([200, "dev-user"]);
    expect(await server.call("GET", "/v1/memories", { token: expired.token })).toEqual(
      unauthorized(/developer token has expired/),
    );
    expect(await server.call("GET", "/v1/memories", { token: "svc_dev_unknown0000000000" })).toEqual(
      unauthorized(/invalid developer token/),
    );
  });

  test("mock key and mock dev-token prefixes act for the user in their suffix", async () => {
    for (const token of ["svc_sk_mock_carol", "svc_dev_mock_carol", "mock-token-carol"]) {
      const [status, me] = await server.call("GET", "/v1/me", { token });
      expect([token, status, me.userId]).toEqual([token, 200, "carol"]);
    }
  });
});

describe("identity-provider ID tokens (RS256 against the JWKS)", () => {
  test("a valid token authenticates as its subject", async () => {
    const token = await idp.sign({ sub: "firebase-uid-42" });
    const [status, me] = await server.call("GET", "/v1/me", { token });
    expect([status, me.userId, me.ok]).toEqual([200, "firebase-uid-42", true]);
    expect((await server.call("POST", "/v1/memories", { token, body: { content: "from an id token" } }))[0]).toBe(201);
  });

  test.each([
    ["a bad signature", { wrongKey: true }, /signature verification failed|no matching signing key/],
    ["a wrong issuer", { iss: "https://securetoken.google.com/other" }, /claim check failed \(iss\)/],
    ["a wrong audience", { aud: "other" }, /claim check failed \(aud\)/],
    ["an expired token", { expiresInSec: -120 }, /token has expired/],
  ])("rejects %s", async (_, options, message) => {
    const token = await idp.sign(options);
    expect(await server.call("GET", "/v1/memories", { token })).toEqual(unauthorized(message));
  });

  test("without IDP configuration every ID token is rejected", async () => {
    const bare = await startTestServer();
    expect(await bare.call("GET", "/v1/memories", { token: await idp.sign() })).toEqual(unauthorized(/not configured/));
    await bare.destroy();
  });

  test("a JWKS file works as well as a URL", async () => {
    const { writeFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tempDir } = await import("./helpers/server");
    const file = join(tempDir(), "jwks.json");
    writeFileSync(file, JSON.stringify(idp.jwks));
    const fromFile = await startTestServer({ env: { IDP_PROJECT_ID: idp.projectId, IDP_JWKS_FILE: file } });
    const [status, me] = await fromFile.call("GET", "/v1/me", { token: await idp.sign({ sub: "file-user" }) });
    expect([status, me.userId]).toEqual([200, "file-user"]);
    await fromFile.destroy();
  });
});

describe("mock tokens are off by default", () => {
  test("mock-token-* is 401 unless --allow-mock-tokens", async () => {
    const strict = await startTestServer({ overrides: { allowMockTokens: false } });
    expect(await strict.call("GET", "/v1/memories", { token: "mock-token-alice" })).toEqual(
      unauthorized(/mock tokens are disabled/),
    );
    // The mock key prefixes say so too, rather than failing as a malformed ID token.
    expect(await strict.call("GET", "/v1/memories", { token: "svc_sk_mock_alice" })).toEqual(
      unauthorized(/mock keys \(svc_sk_mock_…\) are disabled/),
    );
    await strict.destroy();
  });
});

describe("scopes", () => {
  const keyWith = async (...scopes: Array<"chat" | "memory:read" | "memory:write" | "files:write" | "usage:read">) =>
    (await server.services.credentials.createApiKey({ userId: "scoped", scopes })).key;

  test("memory:write can create but not read", async () => {
    const token = await keyWith("memory:write");
    expect((await server.call("POST", "/v1/memories", { token, body: { content: "w" } }))[0]).toBe(201);
    expect(await server.call("GET", "/v1/memories", { token })).toEqual([
      403,
      { error: { code: "forbidden", message: "this credential lacks the 'memory:read' scope" } },
    ]);
    expect((await server.call("POST", "/v1/memories/search", { token, body: { query: "w" } }))[0]).toBe(403);
    expect((await server.call("POST", "/v1/context/build", { token, body: { query: "w" } }))[0]).toBe(403);
  });

  test("memory:read can read, search, build context and delete (as the spec says), not create", async () => {
    const token = await keyWith("memory:read");
    expect(await server.call("POST", "/v1/memories", { token, body: { content: "r" } })).toEqual([
      403,
      { error: { code: "forbidden", message: "this credential lacks the 'memory:write' scope" } },
    ]);
    expect((await server.call("GET", "/v1/memories", { token }))[0]).toBe(200);
    expect((await server.call("POST", "/v1/memories/search", { token, body: { query: "w" } }))[0]).toBe(200);
    expect((await server.call("POST", "/v1/context/build", { token, body: { query: "w" } }))[0]).toBe(200);
    expect((await server.call("DELETE", "/v1/memories/mem_unknown", { token }))[0]).toBe(404);
  });

  test("a chat-only key reaches no memory route, but /v1/me works", async () => {
    const token = await keyWith("chat");
    expect((await server.call("GET", "/v1/memories", { token }))[0]).toBe(403);
    expect((await server.call("POST", "/v1/memories", { token, body: { content: "x" } }))[0]).toBe(403);
    expect((await server.call("GET", "/v1/me", { token }))[0]).toBe(200);
  });
});

describe("GET /v1/me and /health", () => {
  test("/v1/me has the spec's success shape", async () => {
    expect(await server.call("GET", "/v1/me", { token: "mock-token-dana" })).toEqual([
      200,
      {
        ok: true,
        userId: "dana",
        profile: { userName: null, display_name: null, age: null },
        clientKeyEscrow: { present: false },
        verifiedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
    ]);
  });

  test("/v1/me failures use the spec's own shape", async () => {
    expect(await server.call("GET", "/v1/me", { token: null })).toEqual([
      401,
      { ok: false, error: "Missing Token", details: "missing Authorization header (expected 'Bearer <token>')" },
    ]);
    expect(await server.call("GET", "/v1/me", { token: "svc_sk_live_bogus" })).toEqual([
      401,
      { ok: false, error: "Invalid token", details: "invalid API key" },
    ]);
  });

  test("/health is public, with liveness only: no index path, host, pid or error", async () => {
    const store = server.services.store.dialect;
    expect(await server.call("GET", "/health", { token: null })).toEqual([200, { status: "ok", store }]);
  });

  test("/health shows the index's details to an operator key and mock tokens; a user's key sees only its own backlog", async () => {
    const { key } = await server.services.credentials.createApiKey({ userId: "ops", scopes: ["usage:read"] });
    const { key: operator } = await server.services.credentials.createApiKey({ userId: "ops", scopes: ["operator"] });
    const details = expect.objectContaining({
      writer: true,
      uri: server.services.search.internals.lance.uri,
      replicaId: expect.any(String),
      lastError: null,
    });
    for (const token of [operator, "mock-token-ops"]) {
      expect(await server.call("GET", "/health", { token })).toEqual([
        200,
        {
          status: "ok",
          store: server.services.store.dialect,
          index: details,
          vectors: "off",
          extractionJobs: { pending: 0, running: 0, failed: 0 },
        },
      ]);
    }
    const own = { status: "ok", pending: 0, pendingVectors: 0, oldestPendingAt: null };
    expect(await server.call("GET", "/health", { token: key })).toEqual([
      200,
      {
        status: "ok",
        store: server.services.store.dialect,
        index: own,
        vectors: "off",
        extractionJobs: { pending: 0, running: 0, failed: 0 },
      },
    ]);
  });

  test("/health with a token that does not authenticate is 401, not a quiet public answer", async () => {
    expect(await server.call("GET", "/health", { token: "svc_sk_live_bogus" })).toEqual([
      401,
      { error: { code: "unauthorized", message: "invalid API key" } },
    ]);
  });

  test("unknown routes answer the error shape", async () => {
    expect(await server.call("GET", "/v1/nope")).toEqual([
      404,
      { error: { code: "not_found", message: "no such route" } },
    ]);
  });

  test("the OpenAPI document lists the routes", async () => {
    const [status, doc] = await server.call("GET", "/openapi/json", { token: null });
    expect(status).toBe(200);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        "/v1/memories",
        "/v1/memories/search",
        "/v1/memories/{id}",
        "/v1/context/build",
        "/v1/me",
        "/health",
      ]),
    );
  });
});
