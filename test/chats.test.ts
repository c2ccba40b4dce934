import { afterAll, describe, expect, test } from "bun:test";
import { startTestServer } from "./helpers/server";
import { apiError, createWorkspace } from "./helpers/workspaces";

const server = await startTestServer();
afterAll(() => server.destroy());
const ws = await createWorkspace(server, "Chats");
const chats = `/v1/workspaces/${ws}/chats`;

async function newThread(title?: string, workspaceId = ws): Promise<string> {
  const [status, body] = await server.call("POST", `/v1/workspaces/${workspaceId}/chats`, {
    body: title === undefined ? {} : { title },
  });
  if (status !== 201) throw new Error(`thread create failed: ${status} ${JSON.stringify(body)}`);
  return body.id;
}
const append = (threadId: string, body: Record<string, unknown>) =>
  server.call("POST", `${chats}/${threadId}/messages`, { body });

describe("threads", () => {
  test("POST creates a thread: {id, title, createdAt}; the title defaults to 'New chat'", async () => {
    const [status, body] = await server.call("POST", chats, {
      body: { title: "Planning", metadata: { pinned: true } },
    });
    const [, untitled] = await server.call("POST", chats, { body: {} });
    expect({ status, body, untitled }).toEqual({
      status: 201,
      body: { id: expect.stringMatching(/^thr_[0-9A-Z]{26}$/), title: "Planning", createdAt: expect.any(String) },
      untitled: { id: expect.any(String), title: "New chat", createdAt: expect.any(String) },
    });
  });

  test("GET lists threads oldest first with messageCount, metadata and updatedAt", async () => {
    const space = await createWorkspace(server, "Thread list");
    const [, a] = await server.call("POST", `/v1/workspaces/${space}/chats`, {
      body: { title: "A", metadata: { k: 1 } },
    });
    const [, b] = await server.call("POST", `/v1/workspaces/${space}/chats`, { body: { title: "B" } });
    await server.call("POST", `/v1/workspaces/${space}/chats/${b.id}/messages`, {
      body: { role: "user", content: "hi" },
    });
    const [status, list] = await server.call("GET", `/v1/workspaces/${space}/chats`);
    expect({ status, list }).toEqual({
      status: 200,
      list: [
        { id: a.id, title: "A", messageCount: 0, metadata: { k: 1 }, createdAt: a.createdAt, updatedAt: a.createdAt },
        { id: b.id, title: "B", messageCount: 1, metadata: {}, createdAt: b.createdAt, updatedAt: expect.any(String) },
      ],
    });
  });

  test("PATCH sets the title and/or replaces metadata", async () => {
    const space = await createWorkspace(server, "Patch threads");
    const id = await newThread("Old", space);
    const path = `/v1/workspaces/${space}/chats/${id}`;
    const [s1, b1] = await server.call("PATCH", path, { body: { title: "New" } });
    const [s2] = await server.call("PATCH", path, { body: { metadata: { tag: "x" } } });
    const [, list] = await server.call("GET", `/v1/workspaces/${space}/chats`);
    expect({ s1, b1, s2, thread: list[0] }).toEqual({
      s1: 200,
      b1: { success: true },
      s2: 200,
      thread: {
        id,
        title: "New",
        messageCount: 0,
        metadata: { tag: "x" },
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    });
  });

  test.each([
    ["an empty body", {}, 400, apiError("invalid_request", "title: title or metadata is required")],
    ["a blank title", { title: "  " }, 400, apiError("invalid_request", "title: must not be blank")],
    ["a title of the wrong type", { title: 3 }, 400, apiError("invalid_request", "title: expected string")],
    ["metadata not an object", { metadata: "x" }, 400, apiError("invalid_request", "metadata: expected object")],
  ])("PATCH refuses %s", async (_, body, expectedStatus, error) => {
    const id = await newThread("Refusing");
    const [status, answer] = await server.call("PATCH", `${chats}/${id}`, { body });
    expect({ status, answer }).toEqual({ status: expectedStatus, answer: error });
  });

  test("unknown threads and workspaces answer 404", async () => {
    const [patch, patchBody] = await server.call("PATCH", `${chats}/thr_nope`, { body: { title: "x" } });
    const [list] = await server.call("GET", `${chats}/thr_nope/messages`);
    const [post] = await append("thr_nope", { role: "user", content: "x" });
    const [ws404, wsBody] = await server.call("GET", "/v1/workspaces/ws_nope/chats");
    const [create404] = await server.call("POST", "/v1/workspaces/ws_nope/chats", { body: { title: "x" } });
    expect({ patch, patchBody, list, post, ws404, wsBody, create404 }).toEqual({
      patch: 404,
      patchBody: apiError("not_found", "thread 'thr_nope' not found"),
      list: 404,
      post: 404,
      ws404: 404,
      wsBody: apiError("not_found", "workspace 'ws_nope' not found"),
      create404: 404,
    });
  });

  test("need the chat scope", async () => {
    const { key } = await server.services.credentials.createApiKey({
      userId: "alice",
      scopes: ["memory:read", "memory:write"],
    });
    const [status, body] = await server.call("GET", chats, { token: key });
    expect({ status, body }).toEqual({
      status: 403,
      body: apiError("forbidden", "this credential lacks the 'chat' scope"),
    });
  });
});

describe("messages", () => {
  test("form a DAG: the default parent is the thread's latest message; parentId branches", async () => {
    const id = await newThread("DAG");
    const [s1, m1] = await append(id, { role: "user", content: "first" });
    const [, m2] = await append(id, { role: "assistant", content: "second" });
    const [, m3] = await append(id, { role: "user", content: "branch from first", parentId: m1.id });
    const [, m4] = await append(id, { role: "assistant", content: "after the branch" });
    const [status, list] = await server.call("GET", `${chats}/${id}/messages`);
    const message = (m: any, role: string, content: string, parentId: string | null) => ({
      id: m.id,
      role,
      content,
      parentId,
      createdAt: m.createdAt,
    });
    expect({ s1, m1, status, list }).toEqual({
      s1: 201,
      m1: {
        id: expect.stringMatching(/^msg_[0-9A-Z]{26}$/),
        role: "user",
        parentId: null,
        createdAt: expect.any(String),
      },
      status: 200,
      list: [
        message(m1, "user", "first", null),
        message(m2, "assistant", "second", m1.id),
        message(m3, "user", "branch from first", m1.id),
        message(m4, "assistant", "after the branch", m3.id),
      ],
    });
  });

  test("50 parallel appends keep messageCount exact", async () => {
    const space = await createWorkspace(server, "Parallel");
    const id = await newThread("Busy", space);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        server.call("POST", `/v1/workspaces/${space}/chats/${id}/messages`, {
          body: { role: "user", content: `message ${i}` },
        }),
      ),
    );
    const [, threads] = await server.call("GET", `/v1/workspaces/${space}/chats`);
    const [, messages] = await server.call("GET", `/v1/workspaces/${space}/chats/${id}/messages`);
    const ids = new Set(messages.map((m: any) => m.id));
    // Every message but the first hangs under an earlier one: a single chain, since each appended to the latest.
    const chained = messages.every((m: any, i: number) =>
      i === 0 ? m.parentId === null : m.parentId === messages[i - 1].id,
    );
    expect({
      statuses: new Set(results.map(([s]) => s)),
      count: threads[0].messageCount,
      listed: messages.length,
      unique: ids.size,
      chained,
    }).toEqual({
      statuses: new Set([201]),
      count: 50,
      listed: 50,
      unique: 50,
      chained: true,
    });
  });

  test.each([
    ["no role", { content: "x" }, 400, apiError("invalid_request", "role: expected required property")],
    [
      "an unknown role",
      { role: "system", content: "x" },
      400,
      apiError("invalid_request", "role: must be 'user' or 'assistant'"),
    ],
    ["no content", { role: "user" }, 400, apiError("invalid_request", "content: expected required property")],
    [
      "empty content",
      { role: "user", content: "" },
      400,
      apiError("invalid_request", "content: expected string length greater or equal to 1"),
    ],
    [
      "blank content",
      { role: "user", content: " \n " },
      400,
      apiError("invalid_request", "content: must not be blank"),
    ],
    [
      "content of the wrong type",
      { role: "user", content: ["x"] },
      400,
      apiError("invalid_request", "content: expected string"),
    ],
    [
      "an unknown parent",
      { role: "user", content: "x", parentId: "msg_nope" },
      400,
      apiError("invalid_request", "parentId: no message 'msg_nope' in this thread"),
    ],
    [
      "content over 200 KB",
      { role: "user", content: "x".repeat(204_801) },
      413,
      apiError("payload_too_large", "content: is 204801 bytes; the limit is 204800 bytes (200 KB)"),
    ],
  ])("POST refuses %s", async (_, body, expectedStatus, error) => {
    const id = await newThread("Validation");
    const [status, answer] = await append(id, body);
    const [, threads] = await server.call("GET", chats);
    expect({ status, answer, count: threads.find((t: any) => t.id === id).messageCount }).toEqual({
      status: expectedStatus,
      answer: error,
      count: 0,
    });
  });

  test("accepts exactly 200 KB", async () => {
    const id = await newThread("Large");
    const [status] = await append(id, { role: "assistant", content: "y".repeat(204_800) });
    expect(status).toBe(201);
  });

  test("a parent must belong to the same thread", async () => {
    const one = await newThread("One");
    const two = await newThread("Two");
    const [, m] = await append(one, { role: "user", content: "in one" });
    const [status, body] = await append(two, { role: "user", content: "x", parentId: m.id });
    expect({ status, body }).toEqual({
      status: 400,
      body: apiError("invalid_request", `parentId: no message '${m.id}' in this thread`),
    });
  });

  test("are findable through the documents query, by thread (session_id) and as document_type chat", async () => {
    const space = await createWorkspace(server, "Findable");
    const a = await newThread("Trip", space);
    const b = await newThread("Other trip", space);
    const [, m] = await server.call("POST", `/v1/workspaces/${space}/chats/${a}/messages`, {
      body: { role: "user", content: "pack the binoculars" },
    });
    await server.call("POST", `/v1/workspaces/${space}/chats/${b}/messages`, {
      body: { role: "user", content: "binoculars are heavy" },
    });
    const [, all] = await server.call("POST", "/v1/documents/query", {
      body: { workspace_id: space, query: "binoculars" },
    });
    const [, one] = await server.call("POST", "/v1/documents/query", {
      body: {
        query: "binoculars",
        metadata: { filters: { workspaceId: space, session_id: a } },
        filter: { eq: { document_type: "chat" } },
      },
    });
    expect({ count: all.items.length, one: one.items }).toEqual({
      count: 2,
      one: [
        {
          type: "message",
          id: m.id,
          sourceId: a,
          documentId: null,
          threadId: a,
          workspaceId: space,
          title: "Trip",
          score: expect.any(Number),
          snippet: "pack the binoculars",
          content: "pack the binoculars",
        },
      ],
    });
  });
});
