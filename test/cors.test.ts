import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { CORS_ALLOWED_HEADERS, CORS_MCP_HEADERS } from "../src/app";
import { killSpawnedServers, runCli, spawnServer } from "./helpers/cli";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";

/** A server without mock tokens (CORS as docs/security.md says) and one with them (loopback origins only). */
let spec: TestServer;
let mock: TestServer;
let specKey: string;

beforeAll(async () => {
  [spec, mock] = await Promise.all([startTestServer({ overrides: { allowMockTokens: false } }), startTestServer()]);
  specKey = (
    await spec.services.credentials.createApiKey({ userId: "cors-user", scopes: ["memory:read", "memory:write"] })
  ).key;
});
afterAll(async () => {
  await Promise.all([spec.destroy(), mock.destroy()]);
});
afterEach(killSpawnedServers);

const preflight = (server: TestServer, origin: string, path = "/v1/memories") =>
  fetch(server.url + path, {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": "authorization,content-type",
    },
  });

/** The CORS headers of a response, and its status. */
const cors = (response: Response) => ({
  status: response.status,
  allowOrigin: response.headers.get("access-control-allow-origin"),
  vary: response.headers.get("vary"),
});

describe("without mock tokens: any origin, as the spec says", () => {
  test("a preflight allows exactly the spec's request headers and MCP's two, from any origin, with no Vary", async () => {
    const response = await preflight(spec, "https://app.example");
    expect(cors(response)).toEqual({ status: 204, allowOrigin: "*", vary: null });
    const allowed = (response.headers.get("access-control-allow-headers") ?? "")
      .split(",")
      .map((h) => h.trim().toLowerCase())
      .sort();
    expect(allowed).toEqual([...CORS_ALLOWED_HEADERS, ...CORS_MCP_HEADERS].map((h) => h.toLowerCase()).sort());
    expect(response.headers.get("access-control-allow-methods")).toBe("GET, POST, PUT, PATCH, DELETE, OPTIONS");
    expect(response.headers.get("access-control-max-age")).toBe("600");
  });

  test("responses say Access-Control-Allow-Origin: * and expose Mnemo's headers; the answer does not vary by Origin, so no Vary", async () => {
    for (const headers of [{ origin: "https://app.example" }, {}] as Record<string, string>[]) {
      const response = await fetch(`${spec.url}/v1/memories`, {
        headers: { authorization: `Bearer ${specKey}`, ...headers },
      });
      expect(cors(response)).toEqual({ status: 200, allowOrigin: "*", vary: null });
      expect(response.headers.get("access-control-expose-headers")).toContain("X-Request-Id");
    }
  });

  test("a refusal before routing (a path that does not decode) is readable by a page too", async () => {
    const response = await fetch(`${spec.url}/v1/memories/%E0%A4%A`, { headers: { origin: "https://app.example" } });
    expect(cors(response)).toEqual({ status: 400, allowOrigin: "*", vary: null });
  });
});

describe("with mock tokens: pages on this machine only", () => {
  test.each(["https://evil.example", "http://192.168.1.20:8080", "null", "http://localhost.evil.example"])(
    "a preflight from %s is refused, without Access-Control-Allow-Origin",
    async (origin) => {
      const response = await preflight(mock, origin);
      expect(cors(response)).toEqual({ status: 403, allowOrigin: null, vary: "Origin" });
      expect(await response.json()).toEqual({
        error: {
          code: "forbidden",
          message: expect.stringContaining(`origin: cross-origin requests from '${origin}' are refused`),
        },
      });
    },
  );

  test("an actual request from another origin is refused before it runs: nothing is written", async () => {
    const response = await fetch(`${mock.url}/v1/memories`, {
      method: "POST",
      headers: {
        origin: "https://evil.example",
        authorization: "Bearer mock-token-victim",
        "content-type": "application/json",
      },
      body: '{"content":"planted"}',
    });
    expect(cors(response)).toEqual({ status: 403, allowOrigin: null, vary: "Origin" });
    expect(await mock.call("GET", "/v1/memories", { token: "mock-token-victim" })).toEqual([
      200,
      expect.objectContaining({ data: [] }),
    ]);
  });

  test.each(["http://localhost:5173", "http://127.0.0.1:3000", "http://[::1]:8080", "https://localhost"])(
    "a page on %s may call it: its origin is echoed, Vary: Origin",
    async (origin) => {
      expect(cors(await preflight(mock, origin))).toEqual({ status: 204, allowOrigin: origin, vary: "Origin" });
      const response = await fetch(`${mock.url}/v1/memories`, {
        headers: { origin, authorization: "Bearer mock-token-local" },
      });
      expect(cors(response)).toEqual({ status: 200, allowOrigin: origin, vary: "Origin" });
    },
  );

  test("a request without Origin (curl, an SDK) is served, and says it varies by Origin", async () => {
    expect(
      cors(await fetch(`${mock.url}/v1/memories`, { headers: { authorization: "Bearer mock-token-local" } })),
    ).toEqual({ status: 200, allowOrigin: null, vary: "Origin" });
  });
});

describe("mnemo serve --allow-mock-tokens on a non-loopback address", () => {
  test("is refused in one line, exit 1, before the data dir is created", async () => {
    const data = join(tempDir(), "never-created");
    const result = await runCli(["serve", "--allow-mock-tokens", "--host", "0.0.0.0", "--port", "0", "--data", data]);
    expect(result).toEqual({
      exitCode: 1,
      stdout: "",
      stderr:
        "mnemo: refusing to listen on 0.0.0.0 with mock tokens: anyone who reaches it could act as any user. Listen on 127.0.0.1 or ::1, or pass --allow-public-mock-tokens (MNEMO_ALLOW_PUBLIC_MOCK_TOKENS=1) to expose it anyway\n",
    });
    expect(existsSync(data)).toBe(false);
  });

  test("listens when the operator says so (--allow-public-mock-tokens or MNEMO_ALLOW_PUBLIC_MOCK_TOKENS=1), and warns", async () => {
    for (const [args, env] of [
      [["--allow-public-mock-tokens"], {}],
      [[], { MNEMO_ALLOW_PUBLIC_MOCK_TOKENS: "1" }],
    ] as const) {
      const server = await spawnServer(["--allow-mock-tokens", "--host", "0.0.0.0", "--data", tempDir(), ...args], env);
      const port = new URL(server.url).port;
      expect(
        (await fetch(`http://127.0.0.1:${port}/v1/memories`, { headers: { authorization: "Bearer mock-token-x" } }))
          .status,
      ).toBe(200);
      server.proc.kill("SIGTERM");
      await server.proc.exited;
      expect(await server.stderr()).toContain(
        "mock tokens are accepted (mock-token-<uid>) on 0.0.0.0, a non-loopback address",
      );
    }
  });

  test("loopback addresses need no flag", async () => {
    const server = await spawnServer(["--allow-mock-tokens", "--host", "::1", "--data", tempDir()]);
    expect(
      (await fetch(`${server.url}/v1/memories`, { headers: { authorization: "Bearer mock-token-x" } })).status,
    ).toBe(200);
  });
});
