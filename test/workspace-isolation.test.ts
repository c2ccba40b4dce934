import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer } from "./helpers/server";
import { apiError, createDocument, createWorkspace } from "./helpers/workspaces";

/**
 * User B holding user A's workspace, document, note and thread ids learns nothing:
 * every route answers 404 exactly as for a missing id, and searches find nothing of A's.
 */
const server = await startTestServer();
afterAll(() => server.destroy());
const BOB = "mock-token-bob";

let wsA: string;
let wsB: string;
let docA: { id: string };
let threadA: string;
let statusBefore: unknown;

beforeAll(async () => {
  wsA = await createWorkspace(server, "Alice's");
  wsB = await createWorkspace(server, "Bob's", BOB);
  docA = await createDocument(server, wsA, {
    title: "Private",
    indexable_blocks: [{ id: "secret-block", content: "alice secret zeppelin plans" }],
  });
  await server.call("POST", `/v1/workspaces/${wsA}/notebooks`, {
    body: { ciphertext: JSON.stringify([{ id: "nb-a" }]) },
  });
  const [, thread] = await server.call("POST", `/v1/workspaces/${wsA}/chats`, { body: { title: "Private chat" } });
  threadA = thread.id;
  await server.call("POST", `/v1/workspaces/${wsA}/chats/${threadA}/messages`, {
    body: { role: "user", content: "zeppelin hangar code" },
  });
  await server.call("POST", "/v1/memories", { body: { content: "alice zeppelin memory", workspaceId: wsA } });
  statusBefore = (await server.call("GET", `/v1/workspaces/${wsA}/index/status`))[1];
});

/** Every route with A's ids: [method, path, body]. */
function routesWithAlicesIds(): Array<[string, string, unknown]> {
  const ws = `/v1/workspaces/${wsA}`;
  return [
    ["GET", ws, undefined],
    ["GET", `${ws}/documents`, undefined],
    ["POST", `${ws}/documents`, { title: "x" }],
    ["GET", `${ws}/documents/${docA.id}`, undefined],
    ["PUT", `${ws}/documents/${docA.id}`, { title: "x" }],
    ["DELETE", `${ws}/documents/${docA.id}`, undefined],
    ["POST", "/v1/documents", { workspace_id: wsA, title: "x" }],
    ["PATCH", `/v1/documents/${docA.id}`, { workspace_id: wsA, title: "x" }],
    ["PATCH", `/v1/documents/${docA.id}`, { workspace_id: wsB, title: "x" }],
    ["DELETE", `/v1/documents/${docA.id}?workspace_id=${wsA}`, undefined],
    ["DELETE", `/v1/documents/${docA.id}?workspace_id=${wsB}`, undefined],
    ["GET", `/v1/workspaces/${wsB}/documents/${docA.id}`, undefined],
    ["GET", `${ws}/notes`, undefined],
    ["POST", `${ws}/notes`, { documentPayload: {}, blocksPayload: [] }],
    ["GET", `${ws}/notes/${docA.id}`, undefined],
    ["PATCH", `${ws}/notes/${docA.id}`, { markdown: "x" }],
    ["DELETE", `${ws}/notes/${docA.id}`, undefined],
    ["GET", `/v1/workspaces/${wsB}/notes/${docA.id}`, undefined],
    ["GET", `${ws}/notebooks`, undefined],
    ["POST", `${ws}/notebooks`, { ciphertext: "x" }],
    ["GET", `${ws}/notebooks/nb-a`, undefined],
    ["GET", `${ws}/chats`, undefined],
    ["POST", `${ws}/chats`, { title: "x" }],
    ["PATCH", `${ws}/chats/${threadA}`, { title: "x" }],
    ["GET", `${ws}/chats/${threadA}/messages`, undefined],
    ["POST", `${ws}/chats/${threadA}/messages`, { role: "user", content: "x" }],
    ["GET", `/v1/workspaces/${wsB}/chats/${threadA}/messages`, undefined],
    ["POST", `/v1/workspaces/${wsB}/chats/${threadA}/messages`, { role: "user", content: "x" }],
    ["GET", `${ws}/index/status`, undefined],
    ["GET", `${ws}/index/raw`, undefined],
    ["POST", `${ws}/index/clear`, undefined],
    ["POST", `${ws}/reindex`, undefined],
    ["GET", `${ws}/vector-manifest`, undefined],
    ["PUT", `${ws}/vector-manifest`, { manifest: {} }],
    ["GET", `${ws}/search/block-index`, undefined],
    ["PUT", `${ws}/search/block-index`, { index: {} }],
    ["GET", `${ws}/graph/block-edges`, undefined],
    ["PUT", `${ws}/graph/block-edges`, { edges: [] }],
    ["POST", "/v1/documents/query", { workspace_id: wsA, query: "zeppelin" }],
    ["POST", "/v1/documents/query", { query: "zeppelin", metadata: { filters: { workspaceId: wsA } } }],
  ];
}

describe("user B with user A's ids", () => {
  test("gets 404 not_found on every route", async () => {
    const answers: Record<string, unknown> = {};
    const expected: Record<string, unknown> = {};
    for (const [method, path, body] of routesWithAlicesIds()) {
      const [status, answer] = await server.call(method, path, { body, token: BOB });
      const key = `${method} ${path}${body && typeof body === "object" && "workspace_id" in body ? ` (${(body as any).workspace_id === wsB ? "own ws" : "A's ws"})` : ""}`;
      answers[key] = { status, code: answer?.error?.code };
      expected[key] = { status: 404, code: "not_found" };
    }
    expect(answers).toEqual(expected);
  });

  test("gets the same message as for a missing id", async () => {
    const [, foreign] = await server.call("GET", `/v1/workspaces/${wsA}/documents`, { token: BOB });
    const [, foreignDoc] = await server.call("GET", `/v1/workspaces/${wsB}/documents/${docA.id}`, { token: BOB });
    const [, foreignThread] = await server.call("GET", `/v1/workspaces/${wsB}/chats/${threadA}/messages`, {
      token: BOB,
    });
    expect({ foreign, foreignDoc, foreignThread }).toEqual({
      foreign: apiError("not_found", `workspace '${wsA}' not found`),
      foreignDoc: apiError("not_found", `document '${docA.id}' not found`),
      foreignThread: apiError("not_found", `thread '${threadA}' not found`),
    });
  });

  test("finds nothing of A's through the documents query or context build", async () => {
    const [queryStatus, query] = await server.call("POST", "/v1/documents/query", {
      body: { query: "zeppelin", include: { notes: true, memories: true, files: true } },
      token: BOB,
    });
    const [contextStatus, context] = await server.call("POST", "/v1/context/build", {
      body: { query: "zeppelin", workspace_id: wsA, include: { memories: true, notes: true, files: true } },
      token: BOB,
    });
    const [ownContextStatus, ownContext] = await server.call("POST", "/v1/context/build", {
      body: { query: "zeppelin", include: { memories: true, notes: true, files: true } },
      token: BOB,
    });
    // Naming A's workspace answers 404, exactly as a missing workspace (as the documents query does).
    expect({
      queryStatus,
      items: query.items,
      results: query.results,
      contextStatus,
      context,
      ownContextStatus,
      contextItems: ownContext.items,
      contextText: ownContext.contextText,
    }).toEqual({
      queryStatus: 200,
      items: [],
      results: [],
      contextStatus: 404,
      context: apiError("not_found", `workspace '${wsA}' not found`),
      ownContextStatus: 200,
      contextItems: [],
      contextText: "",
    });
  });

  test("may reuse A's document id for a document of its own, without learning it exists", async () => {
    const [status, created] = await server.call("POST", "/v1/documents", {
      body: { workspace_id: wsB, title: "Mine", id: docA.id },
      token: BOB,
    });
    expect({ status, id: created.document.id, ws: created.document.workspace_id }).toEqual({
      status: 201,
      id: docA.id,
      ws: wsB,
    });
  });

  test("leaves A's data untouched", async () => {
    const [, doc] = await server.call("GET", `/v1/workspaces/${wsA}/documents/${docA.id}`);
    const [, threads] = await server.call("GET", `/v1/workspaces/${wsA}/chats`);
    const [, notebooks] = await server.call("GET", `/v1/workspaces/${wsA}/notebooks`);
    const [, status] = await server.call("GET", `/v1/workspaces/${wsA}/index/status`);
    const [, found] = await server.call("POST", "/v1/documents/query", {
      body: { workspace_id: wsA, query: "zeppelin" },
    });
    expect({
      title: doc.document.title,
      threads: threads.map((t: any) => [t.title, t.messageCount]),
      notebooks,
      status,
      found: found.items.map((i: any) => i.type).sort(),
    }).toEqual({
      title: "Private",
      threads: [["Private chat", 1]],
      notebooks: { ciphertext: JSON.stringify([{ id: "nb-a" }]) },
      // The indexer's last run is server-wide: Bob's own writes move it.
      status: { ...(statusBefore as object), indexerLastRunAt: expect.any(String) },
      found: ["block", "message"],
    });
  });
});
