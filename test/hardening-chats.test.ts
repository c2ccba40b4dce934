import { afterAll, describe, expect, test } from "bun:test";
import { mock, startTestServer } from "./helpers/server";
import { apiError, createWorkspace, queryIds } from "./helpers/workspaces";

const server = await startTestServer();
afterAll(() => server.destroy());

const newThread = async (ws: string, body: Record<string, unknown> = { title: "Thread" }) => {
  const [status, created] = await server.call("POST", `/v1/workspaces/${ws}/chats`, { body });
  if (status !== 201) throw new Error(`thread create failed: ${status} ${JSON.stringify(created)}`);
  return created.id as string;
};
const append = (ws: string, thread: string, content: string, role = "user") =>
  server.call("POST", `/v1/workspaces/${ws}/chats/${thread}/messages`, { body: { role, content } });

/** `[status, body, next-page cursor header]` of a GET on a bare-array list. */
async function getPage(path: string, token = mock("alice")): Promise<[number, any, string | null]> {
  const response = await fetch(server.url + path, { headers: { authorization: `Bearer ${token}` } });
  return [response.status, await response.json(), response.headers.get("x-next-cursor")];
}

describe("per-message chat indexing", () => {
  test("an append to a 2,000-message thread writes O(1) index rows, not the whole thread", async () => {
    const ws = await createWorkspace(server, "Long chat");
    const thread = await newThread(ws);
    for (let i = 0; i < 2_000; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) => append(ws, thread, `message number ${i + j} about tides`)),
      );
    }
    // Everything before the append is in the index (drained, so the append below is the
    // only write the writer sees).
    await server.services.indexer.drain();
    expect(await queryIds(server, { workspace_id: ws, query: "tides", top_k: 1 })).toHaveLength(1);
    const lance = server.services.search.internals.lance;
    const replaceItems = lance.replaceItems;
    const written: number[] = [];
    lance.replaceItems = (name, deleteKeys, rows, options) => {
      written.push(rows.length);
      return replaceItems.call(lance, name, deleteKeys, rows, options);
    };
    try {
      const [status, created] = await append(ws, thread, "a lighthouse appears", "assistant");
      const found = await queryIds(server, { workspace_id: ws, query: "lighthouse" });
      // The new message, then the one before it, whose context now holds the new one.
      expect({ status, found }).toEqual({ status: 201, found: [created.id, expect.any(String)] });
      await server.services.indexer.drain();
    } finally {
      lance.replaceItems = replaceItems;
    }
    // The new message, and the one before it (its following context is the new message).
    expect(written.reduce((a, b) => a + b, 0)).toBe(2);
  });

  test("a reply is found by the message it answers (neighbours are context), and session_id still filters one thread", async () => {
    const ws = await createWorkspace(server, "Context chat");
    const a = await newThread(ws, { title: "Trip" });
    const b = await newThread(ws, { title: "Other" });
    await append(ws, a, "which ferry goes to the puffin island?");
    const [, reply] = await append(ws, a, "The 9:40 from the harbour", "assistant");
    await append(ws, b, "puffin facts");
    const [, body] = await server.call("POST", "/v1/documents/query", {
      body: { query: "ferry", metadata: { filters: { workspaceId: ws, session_id: a } } },
    });
    const inB = await queryIds(server, { query: "puffin", metadata: { filters: { workspaceId: ws, session_id: b } } });
    expect({
      ids: body.items.map((i: any) => i.id),
      threads: body.items.map((i: any) => [i.threadId, i.sourceId, i.title]),
      inB: inB.length,
    }).toEqual({
      ids: [expect.any(String), reply.id],
      threads: [
        [a, a, "Trip"],
        [a, a, "Trip"],
      ],
      inB: 1,
    });
  });

  test("reindex queues every message again", async () => {
    const ws = await createWorkspace(server, "Reindexed chat");
    const thread = await newThread(ws);
    for (const content of ["one", "two", "three"]) await append(ws, thread, content);
    const [, reindexed] = await server.call("POST", `/v1/workspaces/${ws}/reindex`);
    expect({ messages: reindexed.indexStatus.messages, pending: reindexed.indexStatus.pending }).toEqual({
      messages: 3,
      pending: { text: 0, vector: 0 },
    });
  });
});

describe("paginated threads and messages", () => {
  test("messages page oldest first (default 50) through X-Next-Cursor", async () => {
    const ws = await createWorkspace(server, "Paged chat");
    const thread = await newThread(ws);
    for (let i = 0; i < 120; i++) await append(ws, thread, `m${i}`);
    const sizes: number[] = [];
    const contents: string[] = [];
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const [status, page, next]: [number, any, string | null] = await getPage(
        `/v1/workspaces/${ws}/chats/${thread}/messages${cursor ? `?cursor=${cursor}` : ""}`,
      );
      expect(status).toBe(200);
      sizes.push(page.length);
      contents.push(...page.map((m: any) => m.content));
      cursor = next;
    }
    const [, all200, none] = await getPage(`/v1/workspaces/${ws}/chats/${thread}/messages?limit=200`);
    expect({ sizes, contents, all: all200.length, none }).toEqual({
      sizes: [50, 50, 20],
      contents: Array.from({ length: 120 }, (_, i) => `m${i}`),
      all: 120,
      none: null,
    });
  });

  test("threads page too; a cursor of one thread or user is refused elsewhere", async () => {
    const ws = await createWorkspace(server, "Many threads");
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await newThread(ws, { title: `T${i}` }));
    for (const id of ids.slice(0, 2)) for (let i = 0; i < 3; i++) await append(ws, id, `x${i}`);
    const [, first, next] = await getPage(`/v1/workspaces/${ws}/chats?limit=2`);
    const [, second, last] = await getPage(`/v1/workspaces/${ws}/chats?limit=3&cursor=${next}`);
    const [, , messageCursor] = await getPage(`/v1/workspaces/${ws}/chats/${ids[0]}/messages?limit=1`);
    const [otherThread, otherThreadBody] = await getPage(
      `/v1/workspaces/${ws}/chats/${ids[1]}/messages?cursor=${messageCursor}`,
    );
    const [otherUser] = await getPage(`/v1/workspaces/${ws}/chats?cursor=${next}`, mock("mallory"));
    const [tooMany, tooManyBody] = await getPage(`/v1/workspaces/${ws}/chats?limit=201`);
    expect({
      pages: [...first, ...second].map((t: any) => t.id),
      last,
      otherThread,
      otherThreadBody,
      otherUser,
      tooMany,
      tooManyField: tooManyBody.error.message.split(":")[0],
    }).toEqual({
      pages: ids,
      last: null,
      otherThread: 400,
      otherThreadBody: apiError("invalid_request", "cursor: is not a cursor returned by this API"),
      // Another user's request fails on the workspace first.
      otherUser: 404,
      tooMany: 400,
      tooManyField: "limit",
    });
  });
});

describe("thread metadata", () => {
  test("is capped at 64 KB on create and on patch (413 naming the field)", async () => {
    const ws = await createWorkspace(server, "Metadata cap");
    const big = { blob: "x".repeat(64 * 1024) };
    const [createStatus, createBody] = await server.call("POST", `/v1/workspaces/${ws}/chats`, {
      body: { title: "Big", metadata: big },
    });
    const thread = await newThread(ws, { title: "Small", metadata: { blob: "x".repeat(60 * 1024) } });
    const [patchStatus, patchBody] = await server.call("PATCH", `/v1/workspaces/${ws}/chats/${thread}`, {
      body: { metadata: big },
    });
    const size = JSON.stringify(big).length;
    const tooLarge = apiError("payload_too_large", `metadata: is ${size} bytes; the limit is 65536 bytes (64 KB)`);
    expect({ createStatus, createBody, patchStatus, patchBody }).toEqual({
      createStatus: 413,
      createBody: tooLarge,
      patchStatus: 413,
      patchBody: tooLarge,
    });
  });
});
