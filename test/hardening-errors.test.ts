import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Elysia, t } from "elysia";
import { errorPlugin } from "../src/http/error-plugin";
import { createLogger, redactSecrets } from "../src/lib/log";
import { startFakeIdp } from "./helpers/fake-idp";
import { startTestServer, type TestServer } from "./helpers/server";

let server: TestServer;
let idp: Awaited<ReturnType<typeof startFakeIdp>>;

beforeAll(async () => {
  idp = await startFakeIdp("mnemo-hardening");
  server = await startTestServer({ env: { IDP_PROJECT_ID: idp.projectId, IDP_JWKS_URL: idp.jwksUrl } });
});
afterAll(async () => {
  await server.destroy();
  idp.stop();
});

const apiError = (code: string, message: string | RegExp) => ({
  error: { code, message: typeof message === "string" ? message : expect.stringMatching(message) },
});

describe("identity-provider ID tokens: exp required, 60 s of clock skew on iat and nbf", () => {
  test.each([
    ["without exp", { expiresInSec: null }, "invalid token: claim check failed (exp: missing)"],
    ["issued 10 minutes in the future", { issuedAtSec: 600 }, "invalid token: claim check failed (iat: in the future)"],
    [
      "not valid before 10 minutes from now",
      { notBeforeSec: 600 },
      "invalid token: claim check failed (nbf: in the future)",
    ],
    ["expired 30 s ago (the skew is not applied to exp)", { expiresInSec: -30 }, "invalid token: token has expired"],
  ])("a token %s → 401", async (_, options, message) => {
    const token = await idp.sign(options);
    expect(await server.call("GET", "/v1/memories", { token })).toEqual([401, apiError("unauthorized", message)]);
  });

  test.each([
    ["issued 30 s in the future", { issuedAtSec: 30 }],
    ["valid from 30 s from now", { notBeforeSec: 30 }],
  ])("a token %s is within the skew and accepted", async (_, options) => {
    const [status, me] = await server.call("GET", "/v1/me", { token: await idp.sign({ sub: "skewed", ...options }) });
    expect([status, me.userId]).toEqual([200, "skewed"]);
  });
});

describe("mock credentials on a server without --allow-mock-tokens", () => {
  test("svc_sk_mock_ and svc_dev_mock_ say that mock credentials are disabled", async () => {
    const strict = await startTestServer({ overrides: { allowMockTokens: false } });
    try {
      expect(await strict.call("GET", "/v1/memories", { token: "svc_sk_mock_alice" })).toEqual([
        401,
        apiError(
          "unauthorized",
          "mock keys (svc_sk_mock_…) are disabled on this server (start it with --allow-mock-tokens)",
        ),
      ]);
      expect(await strict.call("GET", "/v1/memories", { token: "svc_dev_mock_alice" })).toEqual([
        401,
        apiError(
          "unauthorized",
          "mock developer tokens (svc_dev_mock_…) are disabled on this server (start it with --allow-mock-tokens)",
        ),
      ]);
    } finally {
      await strict.destroy();
    }
  });
});

describe("a response that fails its own schema is our bug: logged, answered 500", () => {
  test("500 with the request id, never the schema's field names; the log has the id", async () => {
    const lines: string[] = [];
    const app = new Elysia({ normalize: false })
      .use(errorPlugin(createLogger("error", (line) => lines.push(line))))
      .get("/broken", () => ({ internalField: 1 }) as unknown as { ok: boolean }, {
        response: { 200: t.Object({ ok: t.Boolean() }) },
      });
    const response = await app.handle(new Request("http://localhost/broken"));
    const requestId = response.headers.get("x-request-id")!;
    expect([response.status, await response.json()]).toEqual([
      500,
      apiError("error", `internal error (request id ${requestId})`),
    ]);
    expect(lines).toEqual([
      expect.stringContaining(`response failed its schema requestId="${requestId}" path="/broken"`),
    ]);
  });
});

describe("405 for a known path with a wrong method, 501 for spec routes not built yet, 404 otherwise", () => {
  test.each([
    ["PUT", "/v1/memories", "GET, POST"],
    ["PUT", "/v1/memories/mem_1", "DELETE, GET, PATCH"],
    ["DELETE", "/v1/workspaces", "GET, POST"],
    ["GET", "/v1/context/build", "POST"],
  ])("%s %s → 405 with Allow: %s", async (method, path, allow) => {
    const response = await fetch(server.url + path, { method, headers: { authorization: "Bearer mock-token-alice" } });
    expect([response.status, response.headers.get("allow"), await response.json()]).toEqual([
      405,
      allow,
      apiError("method_not_allowed", `${method} ${path}: method not allowed; this path takes ${allow}`),
    ]);
  });

  test("a known path with a wrong method is 405; unknown paths stay 404", async () => {
    expect((await server.call("GET", "/v1/chat/completions"))[0]).toBe(405);
    expect(await server.call("GET", "/v1/nope")).toEqual([404, apiError("not_found", "no such route")]);
    expect(await server.call("POST", "/v1/memories/a/b")).toEqual([404, apiError("not_found", "no such route")]);
  });
});

describe("clearer messages", () => {
  test.each(["abc", "0", "1001", "-1", "1.5", "99999999999"])(
    "GET /v1/memories?limit=%s names the range",
    async (limit) => {
      expect(await server.call("GET", `/v1/memories?limit=${limit}`)).toEqual([
        400,
        apiError("invalid_request", "limit: must be an integer between 1 and 1000"),
      ]);
    },
  );

  test("a malformed JSON body says so", async () => {
    expect(await server.call("POST", "/v1/memories", { body: "{nope" })).toEqual([
      400,
      apiError("invalid_request", "request body is not valid JSON"),
    ]);
  });
});

describe("the log redactor hides values, never the words of a message", () => {
  test("a validation message naming a key-like field reads as written", async () => {
    const [status, body] = await server.call("POST", "/v1/chat/completions", {
      body: { messages: [{ role: "user", content: "hi" }], memory: { clientKey: "abc" } },
    });
    expect([status, body]).toEqual([400, apiError("invalid_request", "memory.clientKey: unexpected property")]);
  });

  test("prose after a key's name stays; a value after it goes, however it is written", () => {
    const key = `${"q".repeat(8)}Z9+/${"a".repeat(32)}`;
    expect(
      ["clientKey: unexpected property", "x-client-key: must be 32 bytes", "password: Expected string"].map(
        redactSecrets,
      ),
    ).toEqual(["clientKey: unexpected property", "x-client-key: must be 32 bytes", "password: Expected string"]);
    expect(
      [
        `clientKey: ${key}`,
        `clientKey=${key}`,
        `"clientKey":"${key}"`,
        `clientKey: "${key}"`,
        `body="{\\"clientKey\\":\\"${key}\\"}"`,
        "authorization: Basic dXNlcjpwYXNz",
        "password=hunter",
      ].map(redactSecrets),
    ).toEqual([
      "clientKey: [redacted]",
      "clientKey=[redacted]",
      `"clientKey":"[redacted]"`,
      `clientKey: "[redacted]"`,
      `body="{\\"clientKey\\":\\"[redacted]\\"}"`,
      "authorization: [redacted]",
      "password=[redacted]",
    ]);
  });
});

describe("the OpenAPI document", () => {
  let doc: any;
  beforeAll(async () => {
    [, doc] = await server.call("GET", "/openapi/json", { token: null });
  });
  const statuses = (path: string, method: string) => Object.keys(doc.paths[path][method].responses);

  test("/health is public: a bearer token is optional (it adds the index's details)", () => {
    expect(doc.paths["/health"].get.security).toEqual([{}, { bearer: [] }]);
    expect(doc.security).toEqual([{ bearer: [] }]);
  });

  test("no path is listed with a trailing slash", () => {
    const paths = Object.keys(doc.paths);
    expect(paths.filter((path) => path.length > 1 && path.endsWith("/"))).toEqual([]);
    expect(paths).toEqual(expect.arrayContaining(["/v1/memories", "/v1/workspaces"]));
  });

  test("X-Proxy-Decrypt and X-Client-Key are documented as optional headers on the PKMS routes only", () => {
    const headers = (path: string, method: string) =>
      (doc.paths[path][method].parameters ?? [])
        .filter((p: { in: string }) => p.in === "header")
        .map((p: { name: string; required: boolean }) => [p.name, p.required]);
    const optional = [
      ["X-Proxy-Decrypt", false],
      ["X-Client-Key", false],
    ];
    expect(headers("/v1/workspaces/{workspaceId}/notes", "get")).toEqual(optional);
    expect(headers("/v1/workspaces/{workspaceId}/chats", "post")).toEqual(optional);
    expect(headers("/v1/documents", "post")).toEqual(optional);
    expect(headers("/v1/workspaces", "get")).toEqual(optional);
    expect(headers("/v1/memories", "post")).toEqual([]);
  });

  test("each route lists only the statuses it can answer", () => {
    // 404: a workspaceId filter naming no workspace of the caller's.
    expect(statuses("/v1/memories", "get")).toEqual(["200", "400", "401", "403", "404", "500", "503"]);
    expect(statuses("/v1/memories", "post")).toEqual([
      "200",
      "201",
      "400",
      "401",
      "403",
      "404",
      "409",
      "413",
      "415",
      "500",
      "503",
    ]);
    expect(statuses("/v1/memories/{id}", "get")).toEqual(["200", "400", "401", "403", "404", "500", "503"]);
    expect(statuses("/v1/workspaces/{workspaceId}", "get")).toEqual(["200", "400", "401", "403", "404", "500", "503"]);
    expect(statuses("/v1/workspaces", "post")).toEqual(["201", "400", "401", "403", "413", "415", "500", "503"]);
    // 403: the web app's session cookie from a cross-site request.
    expect(statuses("/health", "get")).toEqual(["200", "401", "403"]);
    expect(statuses("/v1/chat/completions", "post")).toEqual(
      expect.arrayContaining(["200", "400", "401", "403", "429", "502", "504"]),
    );
    // Only the routes that meter or bound something answer 429.
    const limited = Object.entries<Record<string, { responses: object }>>(doc.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => "429" in operation.responses)
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(limited.sort()).toEqual([
      "POST /v1/chat/completions",
      "POST /v1/memories/extract",
      "POST /v1/uploads/start",
    ]);
    expect(statuses("/v1/memories/extract", "post")).toEqual([
      "200",
      "400",
      "401",
      "403",
      "404",
      "413",
      "415",
      "429",
      "500",
      "502",
      "503",
      "504",
    ]);
    expect(statuses("/v1/memories/{id}/history", "get")).toEqual(["200", "400", "401", "403", "404", "500", "503"]);
  });

  // Every route of the API contract (docs/api.md), so a route cannot silently go missing.
  test.each([
    ["get", "/health"],
    ["get", "/v1/me"],
    ["post", "/api/v1/webhooks/{webhookId}/sync"],
    ["get", "/v1/workspaces"],
    ["post", "/v1/workspaces"],
    ["get", "/v1/workspaces/{workspaceId}"],
    ["post", "/v1/documents"],
    ["patch", "/v1/documents/{id}"],
    ["delete", "/v1/documents/{id}"],
    ["post", "/v1/documents/query"],
    ["get", "/v1/workspaces/{workspaceId}/documents"],
    ["post", "/v1/workspaces/{workspaceId}/documents"],
    ["get", "/v1/workspaces/{workspaceId}/documents/{documentId}"],
    ["put", "/v1/workspaces/{workspaceId}/documents/{documentId}"],
    ["delete", "/v1/workspaces/{workspaceId}/documents/{documentId}"],
    ["get", "/v1/workspaces/{workspaceId}/notes"],
    ["post", "/v1/workspaces/{workspaceId}/notes"],
    ["get", "/v1/workspaces/{workspaceId}/notes/{noteId}"],
    ["patch", "/v1/workspaces/{workspaceId}/notes/{noteId}"],
    ["delete", "/v1/workspaces/{workspaceId}/notes/{noteId}"],
    ["get", "/v1/workspaces/{workspaceId}/notebooks"],
    ["post", "/v1/workspaces/{workspaceId}/notebooks"],
    ["get", "/v1/workspaces/{workspaceId}/notebooks/{notebookId}"],
    ["get", "/v1/workspaces/{workspaceId}/chats"],
    ["post", "/v1/workspaces/{workspaceId}/chats"],
    ["patch", "/v1/workspaces/{workspaceId}/chats/{threadId}"],
    ["get", "/v1/workspaces/{workspaceId}/chats/{threadId}/messages"],
    ["post", "/v1/workspaces/{workspaceId}/chats/{threadId}/messages"],
    ["get", "/v1/workspaces/{workspaceId}/index/status"],
    ["get", "/v1/workspaces/{workspaceId}/index/raw"],
    ["post", "/v1/workspaces/{workspaceId}/index/clear"],
    ["post", "/v1/workspaces/{workspaceId}/reindex"],
    ["get", "/v1/workspaces/{workspaceId}/vector-manifest"],
    ["put", "/v1/workspaces/{workspaceId}/vector-manifest"],
    ["get", "/v1/workspaces/{workspaceId}/search/block-index"],
    ["put", "/v1/workspaces/{workspaceId}/search/block-index"],
    ["get", "/v1/workspaces/{workspaceId}/graph/block-edges"],
    ["put", "/v1/workspaces/{workspaceId}/graph/block-edges"],
    ["post", "/v1/workspaces/{workspaceId}/files/upload-url"],
    ["post", "/v1/uploads/start"],
    ["post", "/v1/uploads/{uploadId}/part"],
    ["post", "/v1/uploads/{uploadId}/complete"],
    ["get", "/v1/models"],
    ["get", "/v1/usage"],
    ["get", "/v1/credits"],
    ["post", "/v1/chat/completions"],
    ["post", "/v1/memories"],
    ["get", "/v1/memories"],
    ["get", "/v1/memories/{id}"],
    ["delete", "/v1/memories/{id}"],
    ["post", "/v1/memories/search"],
    ["post", "/v1/context/build"],
  ])("the spec route %s %s is served", (method, path) => {
    expect(doc.paths[path]?.[method]).toBeDefined();
    expect(Object.keys(doc.paths[path][method].responses)).not.toContain("501");
  });

  test("bodies are documented as JSON only, with their schema", () => {
    const body = doc.paths["/v1/memories"].post.requestBody;
    expect(Object.keys(body.content)).toEqual(["application/json"]);
    expect(body.content["application/json"].schema.required).toEqual(["content"]);
  });
});
