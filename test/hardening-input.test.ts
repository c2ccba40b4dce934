import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { startTestServer, type TestServer } from "./helpers/server";

let server: TestServer;
let workspaceId: string;

beforeAll(async () => {
  server = await startTestServer();
  const [, workspace] = await server.call("POST", "/v1/workspaces", { body: { name: "hostile" } });
  workspaceId = workspace.id;
});
afterAll(() => server.destroy());

const apiError = (code: string, message: string | RegExp) => ({
  error: { code, message: typeof message === "string" ? message : expect.stringMatching(message) },
});
const badRequest = (message: string | RegExp): [number, unknown] => [400, apiError("invalid_request", message)];

/** Raw JSON text with `depth` nested arrays, as a hostile client would send it. */
const nestedArrays = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
const nestedObjects = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

/** A request with exactly these bytes and headers (fetch would fix up Content-Length). */
function rawRequest(head: string, body = ""): Promise<string> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.write(head + body));
    let received = "";
    socket.on("data", (chunk) => {
      received += chunk.toString("utf8");
      if (/\r\n\r\n[\s\S]*\}\}$/.test(received)) socket.end();
    });
    socket.on("end", () => resolve(received));
    socket.on("error", reject);
  });
}

describe("deep JSON is refused before anything parses it", () => {
  test.each([
    [
      "memory search filters",
      "/v1/memories/search",
      () => `{"query":"x","filters":{"k":${nestedArrays(30_000)}}}`,
      "filters: nesting deeper than 32 levels",
    ],
    [
      "documents query filter.eq",
      "/v1/documents/query",
      () => `{"query":"x","filter":{"eq":${nestedArrays(30_000)}}}`,
      "filter: nesting deeper than 32 levels",
    ],
    [
      "context build filters",
      "/v1/context/build",
      () => `{"query":"x","filters":${nestedArrays(30_000)}}`,
      "filters: nesting deeper than 32 levels",
    ],
    [
      "memory metadata, 100,000 levels",
      "/v1/memories",
      () => `{"content":"x","metadata":${nestedArrays(100_000)}}`,
      "metadata: nesting deeper than 32 levels",
    ],
    ["a bare nested body", "/v1/memories", () => nestedArrays(30_000), "body: nesting deeper than 32 levels"],
  ])("%s → 400 naming the field", async (_, path, body, message) => {
    expect(await server.call("POST", path, { body: body() })).toEqual(badRequest(message));
  });

  test("document_payload (30,000 levels) and document metadata (100,000 levels) → 400 naming the field", async () => {
    const payload = `{"workspace_id":"${workspaceId}","title":"t","document_payload":${nestedArrays(30_000)}}`;
    expect(await server.call("POST", "/v1/documents", { body: payload })).toEqual(
      badRequest("document_payload: nesting deeper than 32 levels"),
    );
    const metadata = `{"workspace_id":"${workspaceId}","title":"t","metadata":${nestedObjects(100_000)}}`;
    expect(await server.call("POST", "/v1/documents", { body: metadata })).toEqual(
      badRequest("metadata: nesting deeper than 32 levels"),
    );
  });

  test("32 levels, the body counting as one, are accepted and stored as sent", async () => {
    // body (level 1) → metadata's 31 nested objects (levels 2 to 32).
    const metadata = JSON.parse(nestedObjects(31));
    const [status, created] = await server.call("POST", "/v1/memories", {
      body: { content: "deep but fine", metadata },
    });
    expect([status, created.metadata]).toEqual([201, metadata]);
    const deeper = { content: "one too deep", metadata: JSON.parse(nestedObjects(32)) };
    expect(await server.call("POST", "/v1/memories", { body: deeper })).toEqual(
      badRequest("metadata: nesting deeper than 32 levels"),
    );
  });

  test("more than 100,000 values in a body → 400 naming the field where the count ran over", async () => {
    const body = `{"query":"x","filters":{"k":[${"0,".repeat(100_000)}0]}}`;
    expect(await server.call("POST", "/v1/memories/search", { body })).toEqual(
      badRequest("filters: the body holds more than 100,000 JSON values, the limit of this route"),
    );
  });

  test("the server keeps answering while deep bodies arrive", async () => {
    const hostile = Array.from({ length: 4 }, () =>
      server.call("POST", "/v1/memories/search", { body: `{"query":"x","filters":${nestedArrays(30_000)}}` }),
    );
    const [health] = await Promise.all([server.call("GET", "/health", { token: null }), ...hostile]);
    expect(health[0]).toBe(200);
    for (const result of await Promise.all(hostile)) expect(result[0]).toBe(400);
  });
});

describe("unpaired UTF-16 surrogates are refused, never stored as U+FFFD", () => {
  test("a lone high surrogate in content → 400 naming the field", async () => {
    expect(await server.call("POST", "/v1/memories", { body: '{"content":"abc\\ud800"}' })).toEqual(
      badRequest("content: contains an unpaired UTF-16 surrogate (\\ud800); send valid Unicode"),
    );
  });

  test("a lone low surrogate deep in metadata names the path", async () => {
    expect(
      await server.call("POST", "/v1/memories", { body: '{"content":"x","metadata":{"notes":["ok","\\uDC00"]}}' }),
    ).toEqual(badRequest("metadata.notes.1: contains an unpaired UTF-16 surrogate (\\uDC00); send valid Unicode"));
  });

  test("a surrogate pair is valid Unicode: stored and returned exactly as sent", async () => {
    const [status, created] = await server.call("POST", "/v1/memories", {
      body: '{"content":"smile \\ud83d\\ude00 \\\\ud800 is text"}',
    });
    expect([status, created.content]).toEqual([201, "smile 😀 \\ud800 is text"]);
    const [, read] = await server.call("GET", `/v1/memories/${created.id}`);
    expect(read.content).toBe(created.content);
  });

  test("bytes that are not UTF-8 → 400", async () => {
    const response = await fetch(`${server.url}/v1/memories`, {
      method: "POST",
      headers: { authorization: "Bearer mock-token-alice", "content-type": "application/json" },
      body: new Uint8Array([...Buffer.from('{"content":"'), 0xed, 0xa0, 0x80, ...Buffer.from('"}')]),
    });
    expect([response.status, await response.json()]).toEqual(badRequest("body: is not valid UTF-8"));
  });
});

describe("body size limits, enforced before parsing; every 413 has the error shape", () => {
  test("a memory body over 512 KB → 413 naming the route's limit", async () => {
    const body = { content: "x", metadata: { pad: "y".repeat(600 * 1024) } };
    expect(await server.call("POST", "/v1/memories", { body })).toEqual([
      413,
      apiError("payload_too_large", "body: is larger than 512 KB, the limit of this route"),
    ]);
  });

  test("a search body over 1 MB → 413", async () => {
    const body = { query: "q".repeat(1024 * 1024 + 1) };
    expect(await server.call("POST", "/v1/memories/search", { body })).toEqual([
      413,
      apiError("payload_too_large", "body: is larger than 1 MB, the limit of this route"),
    ]);
  });

  test("a chunked body is counted while it arrives and refused past the limit", async () => {
    const chunk = new TextEncoder().encode(" ".repeat(64 * 1024));
    let sent = 0;
    const body = new ReadableStream({
      pull(controller) {
        if (sent++ < 40) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const response = await fetch(`${server.url}/v1/memories`, {
      method: "POST",
      headers: { authorization: "Bearer mock-token-alice", "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    expect([response.status, await response.json()]).toEqual([
      413,
      apiError("payload_too_large", "body: is larger than 512 KB, the limit of this route"),
    ]);
  });

  test("a declared body over 32 MB is refused with the error shape before a byte of it is read", async () => {
    const head = `POST /v1/memories HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer mock-token-alice\r\nContent-Type: application/json\r\nContent-Length: ${40 * 1024 * 1024}\r\n\r\n`;
    const answer = await rawRequest(head);
    expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 413 Payload Too Large");
    expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toEqual(
      apiError("payload_too_large", "body: is larger than 32 MB, the largest body this server accepts"),
    );
  });

  test("a declared body over a route's limit is refused without reading it", async () => {
    const head = `POST /v1/memories HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer mock-token-alice\r\nContent-Type: application/json\r\nContent-Length: ${1024 * 1024}\r\n\r\n`;
    const answer = await rawRequest(head, '{"content":"never finished');
    expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 413 Payload Too Large");
  });

  test("document writes admit bodies of several MB", async () => {
    const body = {
      workspace_id: workspaceId,
      title: "big",
      markdown: "word ".repeat(900_000),
      document_payload: { text: "z".repeat(3 * 1024 * 1024) },
    };
    const [status, created] = await server.call("POST", "/v1/documents", { body });
    expect([status, created.document.title]).toEqual([201, "big"]);
  });
});

describe("content types and paths", () => {
  test.each([
    ["text/plain", "content-type: must be application/json, not 'text/plain'"],
    [
      "application/x-www-form-urlencoded",
      "content-type: must be application/json, not 'application/x-www-form-urlencoded'",
    ],
    ["application/json; charset=latin1", "content-type: charset must be utf-8, not 'latin1'"],
  ])("%s on a JSON route → 415", async (type, message) => {
    const [status, body] = await server.call("POST", "/v1/memories", {
      body: '{"content":"x"}',
      headers: { "content-type": type },
    });
    expect([status, body]).toEqual([415, apiError("unsupported_media_type", message)]);
  });

  test("application/json with charset utf-8 and +json types are accepted", async () => {
    expect(
      (
        await server.call("POST", "/v1/memories", {
          body: '{"content":"a"}',
          headers: { "content-type": "application/json; charset=UTF-8" },
        })
      )[0],
    ).toBe(201);
    expect(
      (
        await server.call("POST", "/v1/memories", {
          body: '{"content":"b"}',
          headers: { "content-type": "application/merge-patch+json" },
        })
      )[0],
    ).toBe(201);
  });

  test("a body without Content-Type → 415; no body at all → 400 that says a body is required", async () => {
    const response = await fetch(`${server.url}/v1/memories`, {
      method: "POST",
      headers: { authorization: "Bearer mock-token-alice" },
      body: new Blob(['{"content":"x"}']),
    });
    expect([response.status, await response.json()]).toEqual([
      415,
      apiError("unsupported_media_type", "content-type: must be application/json, not missing"),
    ]);
    expect(await server.call("POST", "/v1/memories")).toEqual(
      badRequest("body: is required; send a JSON object with Content-Type: application/json"),
    );
  });

  test("a route that takes no body ignores one, whatever its type", async () => {
    const [status] = await server.call("POST", `/v1/workspaces/${workspaceId}/index/clear`, {
      body: "not json",
      headers: { "content-type": "text/plain" },
    });
    expect(status).toBe(200);
  });

  test.each(["/v1/memories/%E0%A4%A", "/v1/memories/%zz", "/v1/memor%zzies"])(
    "malformed percent-encoding in %s → 400",
    async (path) => {
      expect(await server.call("GET", path)).toEqual(badRequest(`path: malformed percent-encoding in '${path}'`));
    },
  );

  test("well-formed percent-encoding still reaches the route", async () => {
    expect(await server.call("GET", "/v1/memories/caf%C3%A9")).toEqual([404, apiError("not_found", /café|caf%C3%A9/)]);
  });
});
