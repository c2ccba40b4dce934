import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { callTool, connectMcpHttp, errorOf, ok } from "./helpers/mcp";
import { startTestServer, type TestServer } from "./helpers/server";

/**
 * U+0000 is refused alike on both backends (PostgreSQL text cannot hold it, SQLite can),
 * with a 400 naming the field, before anything reaches the store.
 */
let server: TestServer;
let workspaceId: string;
let documentId: string;

const NUL = "contains the NUL character U+0000, which no text value may hold";
const refused = (message: string): [number, unknown] => [400, { error: { code: "invalid_request", message } }];

beforeAll(async () => {
  server = await startTestServer();
  const [, workspace] = await server.call("POST", "/v1/workspaces", { body: { name: "nul" } });
  workspaceId = workspace.id;
  const [, document] = await server.call("POST", "/v1/documents", {
    body: { workspace_id: workspaceId, title: "kept" },
  });
  documentId = document.id;
});
afterAll(() => server.destroy());

const memoryContents = async () => {
  const [status, list] = await server.call("GET", "/v1/memories?limit=1000");
  expect(status).toBe(200);
  return list.data.map((m: { content: string }) => m.content);
};
const documentTitles = async () => {
  const [status, list] = await server.call("GET", `/v1/workspaces/${workspaceId}/documents`);
  expect(status).toBe(200);
  return list.documents.map((d: { title: string }) => d.title);
};

describe("U+0000 in a body field", () => {
  test("memory create: content, a metadata value and a metadata key → 400 naming the field; nothing stored", async () => {
    expect(await server.call("POST", "/v1/memories", { body: { content: "before\u0000after" } })).toEqual(
      refused(`content: ${NUL}`),
    );
    expect(
      await server.call("POST", "/v1/memories", {
        body: { content: "nul in metadata", metadata: { tags: ["ok", "b\u0000d"] } },
      }),
    ).toEqual(refused(`metadata.tags.1: ${NUL}`));
    expect(
      await server.call("POST", "/v1/memories", { body: { content: "nul in a key", metadata: { "k\u0000": 1 } } }),
    ).toEqual(refused(`metadata: a key ${NUL}`));
    const contents = await memoryContents();
    for (const content of ["before\u0000after", "nul in metadata", "nul in a key"])
      expect(contents).not.toContain(content);
  });

  test("the escape written out, `\\u0000` as six characters of the value, is ordinary text and stored", async () => {
    const [status, created] = await server.call("POST", "/v1/memories", { body: { content: "literal \\u0000 text" } });
    expect([status, created.content]).toEqual([201, "literal \\u0000 text"]);
    expect(await memoryContents()).toContain("literal \\u0000 text");
  });

  test("memory search: query → 400 naming it", async () => {
    expect(await server.call("POST", "/v1/memories/search", { body: { query: "x\u0000" } })).toEqual(
      refused(`query: ${NUL}`),
    );
  });

  test("document create: title → 400 naming it; nothing stored", async () => {
    const body = { workspace_id: workspaceId, title: "doc\u0000title" };
    expect(await server.call("POST", "/v1/documents", { body })).toEqual(refused(`title: ${NUL}`));
    expect(await documentTitles()).toEqual(["kept"]);
  });
});

describe("U+0000 in the URL", () => {
  test("a query parameter → 400 naming it", async () => {
    expect(await server.call("GET", "/v1/memories?cursor=a%00b")).toEqual(refused(`query.cursor: ${NUL}`));
  });

  test("a path id → 400 naming the parameter", async () => {
    expect(await server.call("GET", "/v1/memories/mem_%00")).toEqual(refused(`path.id: ${NUL}`));
    expect(await server.call("GET", `/v1/workspaces/${workspaceId}/documents/${documentId}%00`)).toEqual(
      refused(`path.documentId: ${NUL}`),
    );
    expect(await server.call("DELETE", `/v1/workspaces/${workspaceId}%00/documents/${documentId}`)).toEqual(
      refused(`path.workspaceId: ${NUL}`),
    );
    // Refused, not deleted: the document is still there.
    expect(await documentTitles()).toEqual(["kept"]);
  });

  test("`%2500` is the text `%00`, not U+0000: an ordinary unknown id", async () => {
    const [status, body] = await server.call("GET", "/v1/memories/mem_%2500");
    expect([status, body.error.code]).toEqual([404, "not_found"]);
  });
});

describe("U+0000 in MCP tool arguments", () => {
  test("remember and recall → invalid_request naming the argument; nothing stored", async () => {
    const { client } = await connectMcpHttp(server.url, "mock-token-alice", "nul");
    try {
      expect(errorOf(await callTool(client, "remember", { content: "mcp\u0000fact" }))).toEqual({
        error: { code: "invalid_request", message: `content: ${NUL}` },
      });
      expect(
        errorOf(await callTool(client, "recall", { query: "q", filters: { metadata: { k: "v\u0000" } } })),
      ).toEqual({
        error: { code: "invalid_request", message: `filters.metadata.k: ${NUL}` },
      });
      // The same tool without U+0000 works: the refusal is the character, not the tool.
      expect(ok(await callTool(client, "remember", { content: "mcp fact" })).content).toBe("mcp fact");
    } finally {
      await client.close();
    }
    const contents = await memoryContents();
    expect(contents).toContain("mcp fact");
    expect(contents).not.toContain("mcp\u0000fact");
  });
});
