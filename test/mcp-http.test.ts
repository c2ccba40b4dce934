import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  createSessionRegistry,
  DEFAULT_SESSION_LIMITS,
  SESSION_BYTES_ESTIMATE,
  SESSION_MEMORY_BUDGET,
} from "../src/mcp/sessions";
import { callTool as call, connectMcpHttp, errorOf, ok } from "./helpers/mcp";
import { startTestServer, type TestServer } from "./helpers/server";
import { createWorkspace } from "./helpers/workspaces";

let server: TestServer;
const clients: Client[] = [];

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  await server.destroy();
});

const TOOLS = [
  "accept_memory_proposal",
  "append_chat_message",
  "build_context",
  "extract_memories",
  "forget",
  "list_memories",
  "list_memory_proposals",
  "read_document",
  "recall",
  "reject_memory_proposal",
  "remember",
  "search_documents",
  "write_document",
];

/** An SDK client over Streamable HTTP with a bearer token (default alice's mock token), closed after the file. */
async function connect(token = "mock-token-alice", baseUrl = server.url) {
  const connected = await connectMcpHttp(baseUrl, token);
  clients.push(connected.client);
  return connected;
}

describe("MCP over Streamable HTTP", () => {
  test("lists the tools with input and output schemas and annotations", async () => {
    const { client } = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.outputSchema?.type).toBe("object");
      expect(tool.description!.length).toBeGreaterThan(100);
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName.recall.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.forget.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.remember.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    expect(byName.recall.inputSchema).toMatchObject({
      required: ["query"],
      properties: {
        query: { type: "string", minLength: 1, maxLength: 10000 },
        limit: { type: "integer", minimum: 1, maximum: 100 },
      },
    });
  });

  test("remember, recall, build_context, list_memories and forget in one session", async () => {
    const { client } = await connect();
    const memory = ok(
      await call(client, "remember", {
        content: "Alice's favourite tea is genmaicha",
        session_id: "s1",
        metadata: { topic: "tea" },
      }),
    );
    expect(memory).toMatchObject({
      content: "Alice's favourite tea is genmaicha",
      session_id: "s1",
      metadata: { topic: "tea" },
      workspaceId: null,
    });

    const recalled = ok(
      await call(client, "recall", { query: "genmaicha tea", filters: { metadata: { topic: "tea" } } }),
    );
    expect(recalled.results.map((r: { id: string }) => r.id)).toEqual([memory.id]);

    const context = ok(await call(client, "build_context", { query: "genmaicha" }));
    expect(context.contextText).toBe("## Relevant context\n- Alice's favourite tea is genmaicha");

    const listed = ok(await call(client, "list_memories", { limit: 10 }));
    expect(listed).toMatchObject({ hasMore: false, nextCursor: null });
    expect(listed.memories.map((m: { id: string }) => m.id)).toContain(memory.id);

    const read = await client.readResource({ uri: `mnemo://memories/${memory.id}` });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({
      id: memory.id,
      content: memory.content,
    });

    expect(ok(await call(client, "forget", { id: memory.id }))).toEqual({ id: memory.id, deleted: true });
    expect(ok(await call(client, "recall", { query: "genmaicha tea" })).results).toEqual([]);
    expect(errorOf(await call(client, "forget", { id: memory.id }))).toEqual({
      error: { code: "not_found", message: `memory '${memory.id}' not found` },
    });
  });

  test("documents, chats, resources and the prompt", async () => {
    const { client } = await connect();
    const workspaceId = await createWorkspace(server, "Trips");
    const written = ok(
      await call(client, "write_document", {
        workspace_id: workspaceId,
        title: "Kyoto",
        markdown: "# Kyoto\n\nVisit the moss temple in spring.",
      }),
    );
    expect(written).toMatchObject({
      created: true,
      document: { title: "Kyoto", workspace_id: workspaceId, document_type: "note" },
    });
    const docId = written.document.id;
    const patched = ok(
      await call(client, "write_document", {
        workspace_id: workspaceId,
        document_id: docId,
        metadata_patch: { visited: false },
      }),
    );
    expect(patched).toMatchObject({
      created: false,
      document: { id: docId, title: "Kyoto", metadata: { visited: false } },
    });

    const found = ok(await call(client, "search_documents", { query: "moss temple", workspace_id: workspaceId }));
    expect(found.items[0]).toMatchObject({ type: "block", documentId: docId, title: "Kyoto" });
    expect(ok(await call(client, "read_document", { workspace_id: workspaceId, document_id: docId })).markdown).toBe(
      "# Kyoto\n\nVisit the moss temple in spring.",
    );

    const first = ok(
      await call(client, "append_chat_message", {
        workspace_id: workspaceId,
        role: "user",
        content: "Plan a day in Kyoto",
        thread_title: "Kyoto day",
      }),
    );
    const second = ok(
      await call(client, "append_chat_message", {
        workspace_id: workspaceId,
        thread_id: first.thread_id,
        role: "assistant",
        content: "Start at the moss temple.",
      }),
    );
    expect(second).toMatchObject({ thread_id: first.thread_id, role: "assistant", parentId: first.id });

    const { resources } = await client.listResources();
    expect(resources).toContainEqual(
      expect.objectContaining({ uri: `mnemo://workspaces/${workspaceId}`, name: "Trips" }),
    );
    const doc = await client.readResource({ uri: `mnemo://workspaces/${workspaceId}/documents/${docId}` });
    expect(doc.contents[0]).toMatchObject({
      mimeType: "text/markdown",
      text: "# Kyoto\n\nVisit the moss temple in spring.",
    });
    const ws = JSON.parse(
      ((await client.readResource({ uri: `mnemo://workspaces/${workspaceId}` })).contents[0] as { text: string }).text,
    );
    expect(ws.documents).toEqual([
      expect.objectContaining({ id: docId, uri: `mnemo://workspaces/${workspaceId}/documents/${docId}` }),
    ]);

    const prompt = await client.getPrompt({ name: "use-memory" });
    expect((prompt.messages[0].content as { text: string }).text).toContain("call remember");
  });

  test("errors carry the REST code and message, and the session carries on", async () => {
    const { client } = await connect();
    expect(errorOf(await call(client, "recall", { query: "" }))).toEqual({
      error: {
        code: "invalid_request",
        message:
          "Input validation error: Invalid arguments for tool recall: Too small: expected string to have >=1 characters at query",
      },
    });
    expect(errorOf(await call(client, "remember", { content: 42 })).error).toMatchObject({
      code: "invalid_request",
      message: expect.stringContaining("at content"),
    });
    expect(errorOf(await call(client, "recall", { query: "x", limit: 101 })).error.message).toContain("at limit");
    expect(errorOf(await call(client, "no_such_tool", {}))).toEqual({
      error: { code: "invalid_request", message: "Tool no_such_tool not found" },
    });

    const huge = "x".repeat(60_000);
    const rest = await server.call("POST", "/v1/memories", { body: { content: huge } });
    expect(rest[0]).toBe(413);
    expect(errorOf(await call(client, "remember", { content: huge }))).toEqual(rest[1]);
    expect(errorOf(await call(client, "remember", { content: "   " }))).toEqual({
      error: { code: "invalid_request", message: "content: must not be blank" },
    });
    // Checked against the REST body schema: the same message as the REST route.
    const tooMany = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i]));
    const restFilters = await server.call("POST", "/v1/memories/search", {
      body: { query: "x", filters: { metadata: tooMany } },
    });
    expect(restFilters[0]).toBe(400);
    expect(errorOf(await call(client, "recall", { query: "x", filters: { metadata: tooMany } }))).toEqual(
      restFilters[1],
    );
    expect(errorOf(await call(client, "read_document", { workspace_id: "ws_nope", document_id: "doc_x" }))).toEqual({
      error: { code: "not_found", message: "workspace 'ws_nope' not found" },
    });
    expect(errorOf(await call(client, "write_document", { workspace_id: "ws_nope" }))).toEqual({
      error: { code: "invalid_request", message: "title: is required to create a document" },
    });
    expect(errorOf(await call(client, "write_document", { workspace_id: "ws_nope", title: "t" })).error.code).toBe(
      "not_found",
    );
    expect(ok(await call(client, "list_memories", {}))).toHaveProperty("memories");
  });

  test("a JSON-RPC error carries one 'MCP error <code>:' prefix, and a missing workspace says what applies over HTTP", async () => {
    const { client } = await connect();
    const error = await client.readResource({ uri: "mnemo://memories/mem_nope" }).then(
      () => null,
      (e: Error & { code?: number; data?: unknown }) => e,
    );
    expect(error && { message: error.message, code: error.code, data: error.data }).toEqual({
      message: "MCP error -32002: not_found: memory 'mem_nope' not found",
      code: -32002,
      data: { error: { code: "not_found", message: "memory 'mem_nope' not found" } },
    });
    // An error the SDK raises itself (an unknown prompt) reads the same way.
    const unknown = await client.getPrompt({ name: "no-such-prompt" }).then(
      () => null,
      (e: Error) => e.message,
    );
    expect(unknown).toBe("MCP error -32602: Prompt no-such-prompt not found");
    expect(errorOf(await call(client, "read_document", { document_id: "doc_x" }))).toEqual({
      error: {
        code: "invalid_request",
        message:
          "workspace_id: is required; this session has no default workspace, so pass the id of one of your workspaces (resources/list names them)",
      },
    });
  });

  test("a second user's session never sees the first user's data", async () => {
    const alice = (await connect()).client;
    const bob = (await connect("mock-token-bob")).client;
    const memory = ok(await call(alice, "remember", { content: "Alice's locker code is in the blue notebook" }));
    const workspaceId = await createWorkspace(server, "Private");
    const doc = ok(
      await call(alice, "write_document", { workspace_id: workspaceId, title: "Secret", markdown: "blue notebook" }),
    ).document;

    expect(ok(await call(bob, "recall", { query: "locker code blue notebook" })).results).toEqual([]);
    expect(ok(await call(bob, "build_context", { query: "locker code" })).items).toEqual([]);
    expect(ok(await call(bob, "search_documents", { query: "blue notebook" })).items).toEqual([]);
    expect(ok(await call(bob, "list_memories", {})).memories).toEqual([]);
    expect(errorOf(await call(bob, "forget", { id: memory.id }))).toEqual({
      error: { code: "not_found", message: `memory '${memory.id}' not found` },
    });
    expect(
      errorOf(await call(bob, "read_document", { workspace_id: workspaceId, document_id: doc.id })).error.code,
    ).toBe("not_found");
    expect(
      errorOf(await call(bob, "write_document", { workspace_id: workspaceId, document_id: doc.id, title: "mine" }))
        .error.code,
    ).toBe("not_found");
    expect(errorOf(await call(bob, "remember", { content: "x", workspace_id: workspaceId })).error.code).toBe(
      "not_found",
    );
    await expect(bob.readResource({ uri: `mnemo://memories/${memory.id}` })).rejects.toThrow(/not_found/);
    expect((await bob.listResources()).resources).toEqual([]);
    // Alice's memory is still there.
    expect(ok(await call(alice, "recall", { query: "locker code" })).results.map((r: { id: string }) => r.id)).toEqual([
      memory.id,
    ]);
  });

  test("a session id presented by another principal is 404", async () => {
    const { transport } = await connect();
    const sessionId = transport.sessionId!;
    expect(sessionId).toBeTruthy();
    const body = { jsonrpc: "2.0", id: 9, method: "tools/list", params: {} };
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-session-id": sessionId,
      "mcp-protocol-version": "2025-06-18",
    };
    const asBob = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { ...headers, authorization: "Bearer mock-token-bob" },
      body: JSON.stringify(body),
    });
    expect([asBob.status, await asBob.json()]).toEqual([
      404,
      { jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null },
    ]);
    const asAlice = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { ...headers, authorization: "Bearer mock-token-alice" },
      body: JSON.stringify(body),
    });
    expect(asAlice.status).toBe(200);
    expect(((await asAlice.json()) as { result: { tools: unknown[] } }).result.tools).toHaveLength(TOOLS.length);
    // DELETE ends the session: its id is unknown afterwards.
    await transport.terminateSession();
    const after = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { ...headers, authorization: "Bearer mock-token-alice" },
      body: JSON.stringify(body),
    });
    expect(after.status).toBe(404);
  });

  test("a browser client on this machine can use it (mock tokens allow loopback origins only): the preflight allows MCP's headers and initialize exposes Mcp-Session-Id", async () => {
    const preflight = await fetch(`${server.url}/mcp`, {
      method: "OPTIONS",
      headers: {
        origin: "http://localhost:6274",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization,content-type,mcp-session-id,mcp-protocol-version",
      },
    });
    expect(preflight.status).toBeLessThan(300);
    const allowed = (preflight.headers.get("access-control-allow-headers") ?? "").toLowerCase();
    for (const header of ["authorization", "content-type", "mcp-session-id", "mcp-protocol-version"])
      expect(allowed).toContain(header);
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "browser", version: "1" } },
    };
    const response = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: {
        origin: "http://localhost:6274",
        authorization: "Bearer mock-token-alice",
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify(init),
    });
    expect(response.status).toBe(200);
    await response.text();
    expect(response.headers.get("mcp-session-id")).toBeTruthy();
    expect((response.headers.get("access-control-expose-headers") ?? "").toLowerCase()).toContain("mcp-session-id");
  });

  test("without a token: 401 in the REST error shape; GET answers 405", async () => {
    const response = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect([response.status, await response.json()]).toEqual([
      401,
      { error: { code: "unauthorized", message: expect.stringMatching(/Authorization/) } },
    ]);
    const get = await fetch(`${server.url}/mcp`, {
      headers: { authorization: "Bearer mock-token-alice", accept: "text/event-stream" },
    });
    expect(get.status).toBe(405);
  });

  test("a key without memory:write gets an error result for writing tools; read tools need memory:read", async () => {
    const readOnlyKey = (await server.services.credentials.createApiKey({ userId: "scoped", scopes: ["memory:read"] }))
      .key;
    const reader = (await connect(readOnlyKey)).client;
    const lacks = (scope: string) => ({
      error: { code: "forbidden", message: `this credential lacks the '${scope}' scope` },
    });
    expect(errorOf(await call(reader, "remember", { content: "should not be stored" }))).toEqual(lacks("memory:write"));
    expect(errorOf(await call(reader, "forget", { id: "mem_x" }))).toEqual(lacks("memory:write"));
    expect(errorOf(await call(reader, "write_document", { workspace_id: "ws_x", title: "t" }))).toEqual(
      lacks("memory:write"),
    );
    expect(
      errorOf(await call(reader, "append_chat_message", { workspace_id: "ws_x", role: "user", content: "hi" })),
    ).toEqual(lacks("chat"));
    expect(ok(await call(reader, "list_memories", {})).memories).toEqual([]);

    const writeOnlyKey = (
      await server.services.credentials.createApiKey({ userId: "scoped", scopes: ["memory:write"] })
    ).key;
    const writer = (await connect(writeOnlyKey)).client;
    expect(errorOf(await call(writer, "recall", { query: "x" }))).toEqual(lacks("memory:read"));
    ok(await call(writer, "remember", { content: "written with a write-only key" }));
    expect(ok(await call(reader, "list_memories", {})).memories.map((m: { content: string }) => m.content)).toEqual([
      "written with a write-only key",
    ]);
  });

  test("a revoked key stops working inside an open session", async () => {
    const { key, id } = await server.services.credentials.createApiKey({
      userId: "revoker",
      scopes: ["memory:read", "memory:write"],
    });
    const { client } = await connect(key);
    ok(await call(client, "list_memories", {}));
    expect(await server.services.credentials.revokeApiKey(id)).toBe("revoked");
    await expect(call(client, "list_memories", {})).rejects.toThrow(/401|revoked/);
  });
});

describe("session registry", () => {
  const fakeSession = (id: string, userId: string, closed: string[]) => ({
    id,
    userId,
    transport: {} as never,
    server: { close: async () => void closed.push(id) } as never,
  });

  test("bounds the sessions per user, closing the least recently used, and expires idle ones", async () => {
    let clock = 0;
    const closed: string[] = [];
    const registry = createSessionRegistry({ maxPerUser: 2, maxTotal: 100, idleMs: 100 }, () => clock);
    await registry.add(fakeSession("a1", "alice", closed));
    clock = 10;
    await registry.add(fakeSession("a2", "alice", closed));
    await registry.add(fakeSession("b1", "bob", closed));
    clock = 20;
    registry.find("a1", "alice");
    await registry.add(fakeSession("a3", "alice", closed));
    expect(closed).toEqual(["a2"]);
    expect(registry.find("a1", "bob")).toBeUndefined();
    expect(registry.find("a1", "alice")?.id).toBe("a1");
    clock = 115;
    expect(await registry.sweep()).toBe(1);
    expect(closed).toEqual(["a2", "b1"]);
    expect(registry.size).toBe(2);
    await registry.close();
  });

  test("bounds the sessions of all users together, closing the least recently used of anyone's", async () => {
    let clock = 0;
    const closed: string[] = [];
    const registry = createSessionRegistry({ maxPerUser: 16, maxTotal: 3, idleMs: 60_000 }, () => clock++);
    for (const [id, user] of [
      ["a1", "alice"],
      ["b1", "bob"],
      ["c1", "carol"],
    ])
      await registry.add(fakeSession(id, user, closed));
    registry.find("a1", "alice");
    await registry.add(fakeSession("d1", "dave", closed));
    expect([closed, registry.size]).toEqual([["b1"], 3]);
    await registry.add(fakeSession("e1", "erin", closed));
    expect([closed, registry.find("a1", "alice")?.id, registry.find("d1", "dave")?.id]).toEqual([
      ["b1", "c1"],
      "a1",
      "d1",
    ]);
    await registry.close();
  });

  test("the default bound is set by memory: the sessions' estimated size stays within the budget", () => {
    expect(DEFAULT_SESSION_LIMITS.maxTotal * SESSION_BYTES_ESTIMATE).toBeLessThanOrEqual(SESSION_MEMORY_BUDGET);
    expect(DEFAULT_SESSION_LIMITS).toEqual({ maxPerUser: 16, maxTotal: 1024, idleMs: 30 * 60_000 });
  });

  test("the sweeper runs only while sessions are open, and stops for good when the registry closes", async () => {
    const closed: string[] = [];
    const registry = createSessionRegistry({ maxPerUser: 2, maxTotal: 10, idleMs: 60_000 });
    expect(registry.sweeping).toBe(false);
    await registry.add(fakeSession("s1", "alice", closed));
    expect(registry.sweeping).toBe(true);
    registry.forget("s1");
    expect(registry.sweeping).toBe(false);
    await registry.add(fakeSession("s2", "alice", closed));
    await registry.close();
    expect([registry.sweeping, registry.size, closed]).toEqual([false, 0, ["s2"]]);
    // Nothing is kept or scheduled after close.
    await registry.add(fakeSession("s3", "alice", closed));
    expect([registry.sweeping, registry.size, closed]).toEqual([false, 0, ["s2", "s3"]]);
  });

  test("a server's open sessions are closed, and its sweeper stopped, when it stops", async () => {
    const own = await startTestServer();
    try {
      await connect("mock-token-alice", own.url);
      expect([own.services.mcpSessions.size, own.services.mcpSessions.sweeping]).toEqual([1, true]);
    } finally {
      await own.destroy();
    }
    expect([own.services.mcpSessions.size, own.services.mcpSessions.sweeping]).toEqual([0, false]);
  });
});

describe("MCP on a server in reverse-proxy mode (MNEMO_PROXY_ENCRYPTION=1)", () => {
  test("write_document and append_chat_message store ciphertext sealed with the escrowed key; without one they are refused and nothing is stored", async () => {
    const proxy = await startTestServer({ env: { MNEMO_PROXY_ENCRYPTION: "1" } });
    const escrowed = Buffer.alloc(32, 7);
    try {
      await proxy.services.escrow.set("alice", escrowed);
      const ws = await createWorkspace(proxy, "Sealed");
      const { client } = await connect("mock-token-alice", proxy.url);
      const written = ok(
        await call(client, "write_document", {
          workspace_id: ws,
          title: "Diary",
          markdown: "the vault code is quokka",
        }),
      );
      const chat = ok(
        await call(client, "append_chat_message", { workspace_id: ws, role: "user", content: "my secret plan" }),
      );
      const [, doc] = await proxy.call("GET", `/v1/workspaces/${ws}/documents/${written.document.id}`);
      expect(doc.markdown).toMatch(/^[0-9a-f]{24}:[0-9a-f]{32}:[0-9a-f]+$/);
      const [, messages] = await proxy.call("GET", `/v1/workspaces/${ws}/chats/${chat.thread_id}/messages`);
      expect(JSON.stringify([doc, messages])).not.toMatch(/quokka|secret plan/);
      const [, opened] = await proxy.call("GET", `/v1/workspaces/${ws}/documents/${written.document.id}`, {
        headers: { "x-proxy-decrypt": "true" },
      });
      expect(opened.markdown).toBe("the vault code is quokka");

      const bws = await createWorkspace(proxy, "Bob's", "mock-token-bob");
      const { client: bob } = await connect("mock-token-bob", proxy.url);
      expect(
        errorOf(await call(bob, "write_document", { workspace_id: bws, title: "Plain", markdown: "x" })).error.code,
      ).toBe("invalid_request");
      expect(
        errorOf(await call(bob, "append_chat_message", { workspace_id: bws, role: "user", content: "x" })).error
          .message,
      ).toContain("reverse-proxy mode");
      const [, bobDocs] = await proxy.call("GET", `/v1/workspaces/${bws}/documents`, { token: "mock-token-bob" });
      const [, bobChats] = await proxy.call("GET", `/v1/workspaces/${bws}/chats`, { token: "mock-token-bob" });
      expect([bobDocs.documents, bobChats]).toEqual([[], []]);
    } finally {
      await proxy.destroy();
    }
  });
});
