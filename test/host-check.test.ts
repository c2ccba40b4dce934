/**
 * DNS rebinding against a server that accepts mock tokens: a page on a name the attacker
 * controls, resolved to 127.0.0.1, sends same-origin requests without `Origin`; only their
 * `Host` gives them away. Such a server answers only requests whose Host names this
 * machine (or MNEMO_PUBLIC_URL's host), before anything else. Raw requests set Host.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { request as httpRequest } from "node:http";
import { startTestServer, type TestServer } from "./helpers/server";

let mock: TestServer;
let published: TestServer;
let plain: TestServer;
let plainKey: string;

beforeAll(async () => {
  [mock, published, plain] = await Promise.all([
    startTestServer(),
    startTestServer({ env: { MNEMO_PUBLIC_URL: "https://mnemo.example.com/base" } }),
    startTestServer({ overrides: { allowMockTokens: false } }),
  ]);
  plainKey = (
    await plain.services.credentials.createApiKey({ userId: "alice", scopes: ["memory:read", "memory:write"] })
  ).key;
  await mock.call("POST", "/v1/memories", { body: { content: "alice's secret" } });
});
afterAll(async () => {
  await Promise.all([mock?.destroy(), published?.destroy(), plain?.destroy()]);
});

/** A request with the given Host header (fetch does not let a caller set it). */
function withHost(
  server: TestServer,
  method: string,
  path: string,
  host: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const target = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { hostname: target.hostname, port: target.port, path, method, headers: { host, ...headers } },
      (res) => {
        let text = "";
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => {
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {}
          resolve({ status: res.statusCode!, body });
        });
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** An HTTP/1.0 request with no Host header at all; resolves with its status line. */
function withoutHost(server: TestServer, path: string): Promise<string> {
  const target = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(target.port), target.hostname, () =>
      socket.end(`GET ${path} HTTP/1.0\r\nAuthorization: Bearer mock-token-alice\r\n\r\n`),
    );
    let text = "";
    socket.on("data", (chunk) => (text += chunk));
    socket.on("end", () => resolve(text.split("\r\n")[0]));
    socket.on("error", reject);
  });
}

const ALICE = { authorization: "Bearer mock-token-alice" };
const refused = (host: string) => ({
  status: 403,
  body: { error: { code: "forbidden", message: expect.stringContaining(`host: '${host}' does not name this server`) } },
});

describe("a server accepting mock tokens answers only requests that name this machine", () => {
  test("a rebinding page's request (a foreign Host, no Origin) reads nothing: 403 in the error shape, on every path", async () => {
    const port = new URL(mock.url).port;
    for (const host of [
      `rebind.attacker.example:${port}`,
      "attacker.example",
      "192.168.1.20",
      "localhost.attacker.example",
      `127.0.0.1.nip.io:${port}`,
    ]) {
      expect(await withHost(mock, "GET", "/v1/memories", host, ALICE)).toEqual(refused(host));
    }
    // Before anything else: health, the app, a preflight, a write.
    const host = `rebind.attacker.example:${port}`;
    for (const [method, path] of [
      ["GET", "/health"],
      ["GET", "/app/"],
      ["OPTIONS", "/v1/memories"],
      ["POST", "/v1/memories"],
      ["GET", "/nowhere"],
    ]) {
      expect([method, path, await withHost(mock, method, path, host, ALICE)]).toEqual([method, path, refused(host)]);
    }
  });

  test("a malformed Host, or none, is refused too", async () => {
    for (const host of ["evil.example@127.0.0.1", "127.0.0.1/x", "127.0.0.1:80:80", "[::1"]) {
      expect([host, (await withHost(mock, "GET", "/v1/memories", host, ALICE)).status]).toEqual([host, 403]);
    }
    expect(await withoutHost(mock, "/v1/memories")).toMatch(/^HTTP\/1\.[01] 403 /);
  });

  test("loopback names and addresses, any port and case, are served", async () => {
    const port = new URL(mock.url).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, "LOCALHOST", `[::1]:${port}`, "127.0.0.2", "127.1"]) {
      const answer = await withHost(mock, "GET", "/v1/memories", host, ALICE);
      expect([host, answer.status, answer.body.data?.[0]?.content]).toEqual([host, 200, "alice's secret"]);
    }
  });

  test("MNEMO_PUBLIC_URL's host is served as well; other names are not", async () => {
    expect((await withHost(published, "GET", "/v1/memories", "mnemo.example.com", ALICE)).status).toBe(200);
    expect((await withHost(published, "GET", "/v1/memories", "MNEMO.example.com", ALICE)).status).toBe(200);
    expect(await withHost(published, "GET", "/v1/memories", "other.example.com", ALICE)).toEqual(
      refused("other.example.com"),
    );
  });
});

test("a server without mock tokens answers any Host (a page cannot use a visitor's bearer token by itself)", async () => {
  const answer = await withHost(plain, "GET", "/v1/memories", "mnemo.internal.example", {
    authorization: `Bearer ${plainKey}`,
  });
  expect(answer.status).toBe(200);
});
