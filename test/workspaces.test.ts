import { afterAll, describe, expect, test } from "bun:test";
import { startTestServer } from "./helpers/server";
import { apiError } from "./helpers/workspaces";

const server = await startTestServer();
afterAll(() => server.destroy());

const workspace = (name: string) => ({
  id: expect.stringMatching(/^ws_[0-9A-Z]{26}$/),
  name,
  createdAt: expect.any(String),
  updatedAt: expect.any(String),
});

describe("POST /v1/workspaces", () => {
  test("creates a workspace owned by the caller", async () => {
    const [status, body] = await server.call("POST", "/v1/workspaces", { body: { name: "Research" } });
    expect({ status, body }).toEqual({ status: 201, body: workspace("Research") });
    expect(body.createdAt).toBe(body.updatedAt);
  });

  test("accepts a name of exactly 200 characters", async () => {
    const [status, body] = await server.call("POST", "/v1/workspaces", { body: { name: "n".repeat(200) } });
    expect({ status, body }).toEqual({ status: 201, body: workspace("n".repeat(200)) });
  });

  test.each([
    [{}, "name: expected required property"],
    [{ name: 42 }, "name: expected string"],
    [{ name: "" }, "name: expected string length greater or equal to 1"],
    [{ name: "n".repeat(201) }, "name: expected string length less or equal to 200"],
    [{ name: "   " }, "name: must not be blank"],
  ])("refuses %j", async (body, message) => {
    const [status, error] = await server.call("POST", "/v1/workspaces", { body });
    expect({ status, error }).toEqual({ status: 400, error: apiError("invalid_request", message) });
  });

  test("needs a token", async () => {
    const [status, body] = await server.call("POST", "/v1/workspaces", { body: { name: "x" }, token: null });
    expect({ status, code: body.error.code }).toEqual({ status: 401, code: "unauthorized" });
  });
});

describe("GET /v1/workspaces", () => {
  test("lists only the caller's workspaces, oldest first", async () => {
    const [, a] = await server.call("POST", "/v1/workspaces", { body: { name: "A" }, token: "mock-token-lister" });
    const [, b] = await server.call("POST", "/v1/workspaces", { body: { name: "B" }, token: "mock-token-lister" });
    await server.call("POST", "/v1/workspaces", { body: { name: "Other" }, token: "mock-token-someone" });
    const [status, body] = await server.call("GET", "/v1/workspaces", { token: "mock-token-lister" });
    expect({ status, body }).toEqual({ status: 200, body: [a, b] });
  });

  test("is an empty array for a new user", async () => {
    const [status, body] = await server.call("GET", "/v1/workspaces", { token: "mock-token-newcomer" });
    expect({ status, body }).toEqual({ status: 200, body: [] });
  });
});

describe("GET /v1/workspaces/:workspaceId", () => {
  test("wraps the workspace", async () => {
    const [, created] = await server.call("POST", "/v1/workspaces", { body: { name: "Solo" } });
    const [status, body] = await server.call("GET", `/v1/workspaces/${created.id}`);
    expect({ status, body }).toEqual({ status: 200, body: { workspace: created } });
  });

  test("answers 404 for an unknown id and for another user's workspace alike", async () => {
    const [, mine] = await server.call("POST", "/v1/workspaces", { body: { name: "Mine" } });
    const [missing, missingBody] = await server.call("GET", "/v1/workspaces/ws_unknown");
    const [foreign, foreignBody] = await server.call("GET", `/v1/workspaces/${mine.id}`, { token: "mock-token-bob" });
    expect({ missing, missingBody, foreign, foreignBody }).toEqual({
      missing: 404,
      missingBody: apiError("not_found", "workspace 'ws_unknown' not found"),
      foreign: 404,
      foreignBody: apiError("not_found", `workspace '${mine.id}' not found`),
    });
  });
});

describe("scopes", () => {
  test("memory:read lists and reads; writing needs memory:write", async () => {
    const { key } = await server.services.credentials.createApiKey({ userId: "alice", scopes: ["memory:read"] });
    const [listed] = await server.call("GET", "/v1/workspaces", { token: key });
    const [status, body] = await server.call("POST", "/v1/workspaces", { body: { name: "x" }, token: key });
    expect({ listed, status, body }).toEqual({
      listed: 200,
      status: 403,
      body: apiError("forbidden", "this credential lacks the 'memory:write' scope"),
    });
  });
});
