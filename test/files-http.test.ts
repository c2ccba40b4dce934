import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { request as httpRequest } from "node:http";
import { loadConfig } from "../src/config";
import { startTestServer, type TestServer } from "./helpers/server";
import { createWorkspace } from "./helpers/workspaces";

const server = await startTestServer();
// Without mock tokens: a server accepting them refuses a foreign Host outright (host-check.ts).
const plain = await startTestServer({ overrides: { allowMockTokens: false } });
const behindProxy = await startTestServer({
  env: { MNEMO_PUBLIC_URL: "https://mnemo.example.com/base/" },
  overrides: { allowMockTokens: false },
});
const keyFor = async (s: TestServer) =>
  (
    await s.services.credentials.createApiKey({
      userId: "alice",
      scopes: ["files:write", "memory:read", "memory:write"],
    })
  ).key;
const [plainKey, proxyKey] = [await keyFor(plain), await keyFor(behindProxy)];
afterAll(async () => {
  await server.destroy();
  await plain.destroy();
  await behindProxy.destroy();
});

const sha = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");

/** POST upload-url with a forged `Host` header (fetch does not let a caller set it). */
function uploadUrlWithHost(
  s: TestServer,
  ws: string,
  host: string,
  token: string,
): Promise<{ status: number; body: any }> {
  const target = new URL(`${s.url}/v1/workspaces/${ws}/files/upload-url`);
  const payload = JSON.stringify({ filename: "h.txt", contentType: "text/plain" });
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        hostname: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        headers: {
          host,
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(payload),
        },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

describe("where presigned URLs point", () => {
  test("at the listening address, whatever Host the request names", async () => {
    const ws = await createWorkspace(plain, "Hosts", plainKey);
    const { status, body } = await uploadUrlWithHost(plain, ws, "attacker.example", plainKey);
    expect(status).toBe(200);
    expect(body.url.startsWith(`${plain.url}/v1/workspaces/${ws}/files/${body.key}?`)).toBe(true);
    expect(body.url).not.toContain("attacker.example");
  });

  test("at MNEMO_PUBLIC_URL when set (its path kept, a trailing slash dropped)", async () => {
    const ws = await createWorkspace(behindProxy, "Public", proxyKey);
    const { body } = await uploadUrlWithHost(behindProxy, ws, "attacker.example", proxyKey);
    expect(body.url).toStartWith(`https://mnemo.example.com/base/v1/workspaces/${ws}/files/${body.key}?expires=`);
    // The URL's path and query, sent to the server itself, is accepted.
    const local = `${behindProxy.url}${new URL(body.url).pathname.replace("/base", "")}${new URL(body.url).search}`;
    const put = await fetch(local, {
      method: "PUT",
      body: "through the proxy",
      headers: { "content-type": "text/plain" },
    });
    expect(put.status).toBe(201);
  });

  test("MNEMO_PUBLIC_URL must be an absolute http(s) URL", () => {
    const message =
      "MNEMO_PUBLIC_URL must be an absolute http(s) URL such as https://mnemo.example.com (no query, fragment or credentials)";
    for (const bad of [
      "mnemo.example.com",
      "ftp://mnemo.example.com",
      "/relative",
      "https://mnemo.example.com/?x=1",
      "https://u:p@mnemo.example.com",
      "https://mnemo.example.com/#top",
    ]) {
      expect(() => loadConfig({ dataDir: "/tmp/unused" }, { MNEMO_PUBLIC_URL: bad })).toThrow(message);
    }
    expect(loadConfig({ dataDir: "/tmp/unused" }, { MNEMO_PUBLIC_URL: "http://10.0.0.5:8787" }).publicUrl).toBe(
      "http://10.0.0.5:8787",
    );
    expect(loadConfig({ dataDir: "/tmp/unused" }, {}).publicUrl).toBeUndefined();
  });
});

describe("conditional downloads", () => {
  test("an ETag on every download; If-None-Match with it is 304; If-Range with another tag sends the whole file", async () => {
    const ws = await createWorkspace(server, "Conditional");
    const [, issued] = await server.call("POST", `/v1/workspaces/${ws}/files/upload-url`, {
      body: { filename: "c.txt", contentType: "text/plain" },
    });
    const text = "0123456789abcdefghij";
    expect(
      (await fetch(issued.url, { method: "PUT", body: text, headers: { "content-type": "text/plain" } })).status,
    ).toBe(201);
    const get = (headers: Record<string, string> = {}) =>
      fetch(`${server.url}/v1/workspaces/${ws}/files/${issued.key}`, {
        headers: { authorization: "Bearer mock-token-alice", ...headers },
      });
    const etag = `"${sha(text)}"`;

    const first = await get();
    expect([first.status, first.headers.get("etag"), await first.text()]).toEqual([200, etag, text]);
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const cached = await get({ "if-none-match": header });
      expect([header, cached.status, cached.headers.get("etag"), await cached.text()]).toEqual([header, 304, etag, ""]);
    }
    const changed = await get({ "if-none-match": '"something-else"' });
    expect([changed.status, await changed.text()]).toEqual([200, text]);

    const resumed = await get({ range: "bytes=10-", "if-range": etag });
    expect([resumed.status, resumed.headers.get("content-range"), await resumed.text()]).toEqual([
      206,
      "bytes 10-19/20",
      "abcdefghij",
    ]);
    const stale = await get({ range: "bytes=10-", "if-range": '"an-older-version"' });
    expect([stale.status, stale.headers.get("content-range"), await stale.text()]).toEqual([200, null, text]);
    // Another user is not told the file exists by a conditional request either.
    const bob = await get({ authorization: "Bearer mock-token-bob", "if-none-match": etag });
    expect(bob.status).toBe(404);
  });
});
