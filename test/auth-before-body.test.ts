import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildApp } from "../src/app";
import { headerChecksOf } from "../src/lib/header-checks";
import { startTestServer, type TestServer } from "./helpers/server";

const SYNC = "sync-hook-before-body";
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ env: { WEBHOOK_ID_SYNC: SYNC } });
});
afterAll(async () => {
  await server.destroy();
});

const CHUNK_BYTES = 64 * 1024;
const CHUNKS = 256; // 16 MB, under the 20 MB limit of a document write

/**
 * Sends a JSON body (16 MB by default) as a stream that hands out one 64 KB chunk each time the
 * connection pulls one, and reports how many chunks had been pulled when the response
 * arrived. A server that reads the body before answering has pulled all of them.
 */
async function streamedPost(
  path: string,
  headers: Record<string, string>,
  { chunks = CHUNKS, workspaceId = "ws_x" } = {},
) {
  let pulled = 0;
  const head = new TextEncoder().encode(`{"workspace_id":"${workspaceId}","title":"big","markdown":"`);
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled === chunks) return controller.close();
        const chunk = new Uint8Array(CHUNK_BYTES).fill(0x61);
        if (pulled === 0) chunk.set(head);
        if (pulled === chunks - 1) chunk.set(new TextEncoder().encode('"}'), CHUNK_BYTES - 2);
        pulled++;
        controller.enqueue(chunk);
      },
    },
    { highWaterMark: 0 },
  );
  const response = await fetch(server.url + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  const pulledAtResponse = pulled;
  const json: any = await response.json();
  return { status: response.status, body: json, pulledAtResponse };
}

const apiError = (code: string, message: string) => ({ error: { code, message } });

describe("a refused caller's body is never read", () => {
  test("no token: 401 while the 16 MB body is still being sent", async () => {
    const result = await streamedPost("/v1/documents", {});
    expect(result).toEqual({
      status: 401,
      body: apiError("unauthorized", "missing Authorization header (expected 'Bearer <token>')"),
      pulledAtResponse: expect.any(Number),
    });
    expect(result.pulledAtResponse).toBeLessThan(CHUNKS);
  });

  test("an invalid API key: 401 before the body", async () => {
    const result = await streamedPost("/v1/documents", { authorization: "Bearer svc_sk_live_nope" });
    expect([result.status, result.body]).toEqual([401, apiError("unauthorized", "invalid API key")]);
    expect(result.pulledAtResponse).toBeLessThan(CHUNKS);
  });

  test("a key without the route's scope: 403 before the body", async () => {
    const { key } = await server.services.credentials.createApiKey({ userId: "reader", scopes: ["memory:read"] });
    const result = await streamedPost("/v1/documents", { authorization: `Bearer ${key}` });
    expect([result.status, result.body]).toEqual([
      403,
      apiError("forbidden", "this credential lacks the 'memory:write' scope"),
    ]);
    expect(result.pulledAtResponse).toBeLessThan(CHUNKS);
  });

  test("webhooks: an unknown id (404) and a missing ID token (401) are answered before the body", async () => {
    const unknown = await streamedPost("/api/v1/webhooks/nope/sync", {});
    expect([unknown.status, unknown.body]).toEqual([404, apiError("not_found", "webhook 'nope' not found")]);
    expect(unknown.pulledAtResponse).toBeLessThan(CHUNKS);
    const anonymous = await streamedPost(`/api/v1/webhooks/${SYNC}/sync`, {});
    expect(anonymous.status).toBe(401);
    expect(anonymous.pulledAtResponse).toBeLessThan(CHUNKS);
  });

  test("an authorised caller's streamed body is read whole and stored", async () => {
    const { key } = await server.services.credentials.createApiKey({
      userId: "writer",
      scopes: ["memory:read", "memory:write"],
    });
    const [, workspace] = await server.call("POST", "/v1/workspaces", { token: key, body: { name: "Big" } });
    const head = `{"workspace_id":"${workspace.id}","title":"big","markdown":"`.length;
    const result = await streamedPost(
      "/v1/documents",
      { authorization: `Bearer ${key}` },
      { chunks: 32, workspaceId: workspace.id },
    );
    expect([result.status, result.pulledAtResponse]).toEqual([201, 32]);
    expect([result.body.document.title, result.body.document.markdown.length]).toEqual([
      "big",
      32 * CHUNK_BYTES - head - 2,
    ]);
  });

  test("every route that takes a JSON body checks its caller before the body is read", () => {
    const routes = buildApp(server.services, () => server.url).routes.filter((route) => route.hooks?.body);
    expect(routes.length).toBeGreaterThan(20);
    expect(
      routes
        .filter((route) => headerChecksOf(route.hooks?.transform).length === 0)
        .map((route) => `${route.method} ${route.path}`),
    ).toEqual([]);
  });

  test("a route without a body still authenticates (GET, DELETE)", async () => {
    expect((await server.call("GET", "/v1/memories/mem_x", { token: null }))[0]).toBe(401);
    expect((await server.call("DELETE", "/v1/memories/mem_x", { token: null }))[0]).toBe(401);
  });
});
