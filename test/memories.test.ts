import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { textTable } from "../src/search/lance/partitions";
import { indexedColumns } from "./helpers/index-rows";
import { startTestServer, type TestServer } from "./helpers/server";
import { createWorkspace } from "./helpers/workspaces";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.destroy());

const ALICE = "mock-token-alice";
const BOB = "mock-token-bob";

const record = (overrides: Record<string, unknown> = {}) => ({
  id: expect.stringMatching(/^mem_[0-9A-Z]{26}$/),
  ownerId: "alice",
  projectId: "default",
  content: expect.any(String),
  metadata: {},
  status: "active",
  workspaceId: null,
  session_id: null,
  createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
  updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
  ...overrides,
});

describe("POST /v1/memories", () => {
  test("creates a memory with the spec's record shape and 201", async () => {
    const [status, body] = await server.call("POST", "/v1/memories", {
      body: { content: "Alice prefers green tea in the morning", metadata: { topic: "drinks", rank: 2 } },
    });
    expect(status).toBe(201);
    expect(body).toEqual(
      record({ content: "Alice prefers green tea in the morning", metadata: { topic: "drinks", rank: 2 } }),
    );
    expect(body.createdAt).toBe(body.updatedAt);
  });

  test("accepts a custom id, workspaceId and session_id; projectId follows the workspace", async () => {
    const ws = await createWorkspace(server);
    const [status, body] = await server.call("POST", "/v1/memories", {
      body: { id: "custom-1", content: "Custom id memory", workspaceId: ws, session_id: "s1" },
    });
    expect(status).toBe(201);
    expect(body).toEqual(
      record({ id: "custom-1", content: "Custom id memory", workspaceId: ws, projectId: ws, session_id: "s1" }),
    );
  });

  test("a duplicate custom id for the same owner is 409 conflict; another owner may reuse it", async () => {
    const [status, body] = await server.call("POST", "/v1/memories", { body: { id: "custom-1", content: "again" } });
    expect([status, body]).toEqual([
      409,
      { error: { code: "conflict", message: "id: a memory with id 'custom-1' already exists" } },
    ]);
    const [bobStatus, bobBody] = await server.call("POST", "/v1/memories", {
      token: BOB,
      body: { id: "custom-1", content: "bob's own" },
    });
    expect(bobStatus).toBe(201);
    expect(bobBody.ownerId).toBe("bob");
  });

  test.each([
    [{}, 400, "invalid_request", /content/],
    [{ content: "" }, 400, "invalid_request", /content/],
    [{ content: "   \n " }, 400, "invalid_request", /content: must not be blank/],
    [{ content: 42 }, 400, "invalid_request", /content/],
    [{ content: "ok", metadata: [] }, 400, "invalid_request", /metadata/],
    [{ content: "ok", metadata: "x" }, 400, "invalid_request", /metadata/],
    [{ content: "ok", metadata: null }, 400, "invalid_request", /metadata/],
    [{ content: "ok", id: "" }, 400, "invalid_request", /id/],
    [{ content: "ok", id: "has space" }, 400, "invalid_request", /id/],
    [{ content: "ok", workspaceId: 7 }, 400, "invalid_request", /workspaceId/],
    [{ content: "ok", session_id: "" }, 400, "invalid_request", /session_id/],
    [{ content: "x".repeat(51_201) }, 413, "payload_too_large", /content: is 51201 bytes; the limit is 51200 bytes/],
    [{ content: "é".repeat(25_601) }, 413, "payload_too_large", /content: is 51202 bytes/],
  ])("rejects %j with %i %s", async (body, status, code, message) => {
    const [actual, response] = await server.call("POST", "/v1/memories", { body });
    expect(actual).toBe(status);
    expect(response.error.code).toBe(code);
    expect(response.error.message).toMatch(message);
  });

  test("content of exactly 51,200 bytes is accepted", async () => {
    const [status] = await server.call("POST", "/v1/memories", { body: { content: "y".repeat(51_200) } });
    expect(status).toBe(201);
    const [, list] = await server.call("GET", "/v1/memories?limit=1");
    await server.call("DELETE", `/v1/memories/${list.data[0].id}`);
  });

  test("malformed JSON and a missing body are 400 with the error shape", async () => {
    expect(await server.call("POST", "/v1/memories", { body: "{nope" })).toEqual([
      400,
      { error: { code: "invalid_request", message: "request body is not valid JSON" } },
    ]);
    const [status, body] = await server.call("POST", "/v1/memories");
    expect(status).toBe(400);
    expect(body.error.code).toBe("invalid_request");
  });
});

describe("GET /v1/memories", () => {
  let isolated: TestServer;
  beforeAll(async () => {
    isolated = await startTestServer();
    for (let i = 0; i < 7; i++)
      await isolated.call("POST", "/v1/memories", {
        token: "mock-token-pager",
        body: { content: `memory number ${i}` },
      });
  });
  afterAll(() => isolated.destroy());

  test("lists newest first with cursor pages that cover everything once", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const [status, page]: [number, any] = await isolated.call(
        "GET",
        `/v1/memories?limit=3${cursor ? `&cursor=${cursor}` : ""}`,
        { token: "mock-token-pager" },
      );
      expect(status).toBe(200);
      seen.push(...page.data.map((m: { content: string }) => m.content));
      expect(page.hasMore).toBe(page.nextCursor !== null);
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([6, 5, 4, 3, 2, 1, 0].map((i) => `memory number ${i}`));
  });

  test("default limit is 100 and the page has the documented shape", async () => {
    const [status, page] = await isolated.call("GET", "/v1/memories", { token: "mock-token-pager" });
    expect(status).toBe(200);
    expect(page).toEqual({ data: expect.any(Array), nextCursor: null, hasMore: false });
    expect(page.data).toHaveLength(7);
  });

  test.each(["limit=0", "limit=1001", "limit=abc", "limit=2.5", "cursor=bogus"])("rejects ?%s", async (query) => {
    const [status, body] = await isolated.call("GET", `/v1/memories?${query}`, { token: "mock-token-pager" });
    expect(status).toBe(400);
    expect(body.error.code).toBe("invalid_request");
    expect(body.error.message).toMatch(query.split("=")[0]);
  });
});

describe("GET and DELETE /v1/memories/:id", () => {
  test("gets, deletes with the union shape, then 404s", async () => {
    const [, created] = await server.call("POST", "/v1/memories", { body: { content: "to be deleted soon" } });
    expect(await server.call("GET", `/v1/memories/${created.id}`)).toEqual([200, created]);
    expect(await server.call("DELETE", `/v1/memories/${created.id}`)).toEqual([
      200,
      { id: created.id, deleted: true, success: true },
    ]);
    expect(await server.call("GET", `/v1/memories/${created.id}`)).toEqual([
      404,
      { error: { code: "not_found", message: `memory '${created.id}' not found` } },
    ]);
    expect((await server.call("DELETE", `/v1/memories/${created.id}`))[0]).toBe(404);
  });

  test("a deleted memory disappears from search at once", async () => {
    const [, created] = await server.call("POST", "/v1/memories", { body: { content: "zanzibar spice market" } });
    const [, before] = await server.call("POST", "/v1/memories/search", { body: { query: "zanzibar" } });
    expect(before.results.map((r: { id: string }) => r.id)).toEqual([created.id]);
    await server.call("DELETE", `/v1/memories/${created.id}`);
    const [, after] = await server.call("POST", "/v1/memories/search", { body: { query: "zanzibar" } });
    expect(after.results).toEqual([]);
  });
});

describe("POST /v1/memories/search", () => {
  let s: TestServer;
  let ws1: string;
  beforeAll(async () => {
    s = await startTestServer();
    ws1 = await createWorkspace(s);
    const memories = [
      { content: "Rex the dog loves chasing tennis balls", metadata: { topic: "pets", year: 2023 }, session_id: "s1" },
      { content: "The dog park opens at seven", metadata: { topic: "places", year: 2024 }, workspaceId: ws1 },
      { content: "Quarterly report is due on Friday", metadata: { topic: "work" } },
      { content: "Order 4711 shipped to Lisbon", metadata: { topic: "orders", vip: true } },
    ];
    for (const body of memories) await s.call("POST", "/v1/memories", { body });
  });
  afterAll(() => s.destroy());

  test("finds a memory right after it is written (read-your-writes), with the union shape", async () => {
    const [, created] = await s.call("POST", "/v1/memories", {
      body: { content: "Marmalade sandwiches for Paddington" },
    });
    const [status, body] = await s.call("POST", "/v1/memories/search", { body: { query: "marmalade" } });
    expect(status).toBe(200);
    expect(body).toEqual({
      results: [
        { ...created, score: expect.any(Number), signals: { text: expect.any(Number), words: expect.any(Number) } },
      ],
      data: [
        { ...created, score: expect.any(Number), signals: { text: expect.any(Number), words: expect.any(Number) } },
      ],
      mode: "fulltext_fallback",
      strategy: "fulltext",
      signals: ["text", "words"],
    });
    expect(body.results[0].score).toBeGreaterThan(0);
    expect(body.results[0].score).toBeLessThanOrEqual(1);
    // The fused score is the weighted mean of the hit's signals (text 1, words 0.3).
    const { text, words } = body.results[0].signals;
    expect(Math.abs(body.results[0].score - (text + 0.3 * words) / 1.3)).toBeLessThan(1e-5);
  });

  test("ranks by score, descending, and honours limit", async () => {
    const [, body] = await s.call("POST", "/v1/memories/search", { body: { query: "dog", limit: 1 } });
    expect(body.results).toHaveLength(1);
    const [, all] = await s.call("POST", "/v1/memories/search", { body: { query: "dog" } });
    const scores = all.results.map((r: { score: number }) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(all.results.map((r: { content: string }) => r.content).sort()).toEqual([
      "Rex the dog loves chasing tennis balls",
      "The dog park opens at seven",
    ]);
  });

  test("finds exact numbers and stems", async () => {
    const [, numbers] = await s.call("POST", "/v1/memories/search", { body: { query: "4711" } });
    expect(numbers.results.map((r: { content: string }) => r.content)).toEqual(["Order 4711 shipped to Lisbon"]);
    const [, stems] = await s.call("POST", "/v1/memories/search", { body: { query: "chase" } });
    expect(stems.results.map((r: { content: string }) => r.content)).toEqual([
      "Rex the dog loves chasing tennis balls",
    ]);
  });

  test.each([
    [{ workspaceId: "ws_1" }, ["The dog park opens at seven"]],
    [{ session_id: "s1" }, ["Rex the dog loves chasing tennis balls"]],
    [{ metadata: { topic: "pets" } }, ["Rex the dog loves chasing tennis balls"]],
    [{ topic: "places" }, ["The dog park opens at seven"]],
    [{ year: 2024 }, ["The dog park opens at seven"]],
    [{ topic: "pets", year: 2024 }, []],
    [{ workspaceId: "ws_missing" }, []],
  ])("filters %j", async (filters, expected) => {
    // "ws_1" stands for the workspace created in beforeAll.
    const real =
      "workspaceId" in filters && filters.workspaceId === "ws_1" ? { ...filters, workspaceId: ws1 } : filters;
    const [status, body] = await s.call("POST", "/v1/memories/search", { body: { query: "dog", filters: real } });
    expect(status).toBe(200);
    expect(body.results.map((r: { content: string }) => r.content)).toEqual(expected);
  });

  test("a boolean metadata filter and a quote in a value are handled safely", async () => {
    const [, vip] = await s.call("POST", "/v1/memories/search", { body: { query: "order", filters: { vip: true } } });
    expect(vip.results.map((r: { content: string }) => r.content)).toEqual(["Order 4711 shipped to Lisbon"]);
    const [status, body] = await s.call("POST", "/v1/memories/search", {
      body: { query: "order' OR '1'='1", filters: { topic: "x' OR owner_id <> '" } },
    });
    expect([status, body.results]).toEqual([200, []]);
  });

  test("minScore drops weak results", async () => {
    const [, body] = await s.call("POST", "/v1/memories/search", { body: { query: "dog", minScore: 0.999 } });
    expect(body.results).toEqual([]);
  });

  test("queries of punctuation or stop words answer an empty list, not an error", async () => {
    for (const query of ["!!!", "the", '"(unclosed', "*", "\\"]) {
      const [status, body] = await s.call("POST", "/v1/memories/search", { body: { query } });
      expect([query, status, body.results]).toEqual([query, 200, []]);
    }
  });

  test.each([
    [{}, /query/],
    [{ query: "" }, /query/],
    [{ query: 5 }, /query/],
    [{ query: "dog", limit: 0 }, /limit/],
    [{ query: "dog", limit: 101 }, /limit/],
    [{ query: "dog", limit: "3" }, /limit/],
    [{ query: "dog", filters: [] }, /filters/],
    [{ query: "dog", filters: { metadata: { nested: { a: 1 } } } }, /filters/],
    [{ query: "dog", filters: { topic: { a: 1 } } }, /filters/],
    [{ query: "dog", minScore: 2 }, /minScore/],
  ])("rejects %j", async (body, message) => {
    const [status, response] = await s.call("POST", "/v1/memories/search", { body });
    expect(status).toBe(400);
    expect(response.error.code).toBe("invalid_request");
    expect(response.error.message).toMatch(message);
  });
});

describe("POST /v1/context/build", () => {
  test("builds the spec shape: heading line then one bullet per item", async () => {
    const s = await startTestServer();
    await s.call("POST", "/v1/memories", { body: { content: "Alice is allergic to peanuts" } });
    await s.call("POST", "/v1/memories", { body: { content: "Alice's sister\nlives in Oslo (peanut farmer)" } });
    const [status, body] = await s.call("POST", "/v1/context/build", {
      body: { query: "peanut allergy", include: { notes: true } },
    });
    expect(status).toBe(200);
    expect(body).toEqual({
      query: "peanut allergy",
      mode: "fulltext_fallback",
      strategy: "fulltext",
      signals: ["text", "words"],
      items: expect.any(Array),
      contextText: expect.any(String),
    });
    expect(body.items).toHaveLength(2);
    expect(body.items[0]).toEqual({
      type: "memory",
      id: expect.stringMatching(/^mem_/),
      score: expect.any(Number),
      content: "Alice is allergic to peanuts",
      workspaceId: null,
    });
    expect(body.contextText).toBe(
      [
        "## Relevant context",
        ...body.items.map((i: { content: string }) => `- ${i.content.replace(/\s+/g, " ")}`),
      ].join("\n"),
    );
    const [, none] = await s.call("POST", "/v1/context/build", { body: { query: "unrelated zebra" } });
    expect(none).toEqual({
      query: "unrelated zebra",
      mode: "fulltext_fallback",
      strategy: "fulltext",
      signals: ["text", "words"],
      items: [],
      contextText: "",
    });
    const [, excluded] = await s.call("POST", "/v1/context/build", {
      body: { query: "peanut", include: { memories: false } },
    });
    expect(excluded.items).toEqual([]);
    await s.destroy();
  });

  test("a workspace scope keeps that workspace's and personal memories, not other workspaces'", async () => {
    const s = await startTestServer();
    const [one, two] = [await createWorkspace(s, "one"), await createWorkspace(s, "two")];
    await s.call("POST", "/v1/memories", { body: { content: "kiwi in workspace one", workspaceId: one } });
    await s.call("POST", "/v1/memories", { body: { content: "kiwi in workspace two", workspaceId: two } });
    await s.call("POST", "/v1/memories", { body: { content: "kiwi for everyone" } });
    const [, body] = await s.call("POST", "/v1/context/build", { body: { query: "kiwi", workspace_id: one } });
    expect(body.items.map((i: { content: string }) => i.content).sort()).toEqual([
      "kiwi for everyone",
      "kiwi in workspace one",
    ]);
    await s.destroy();
  });

  test.each([
    [{}, /query/],
    [{ query: "" }, /query/],
    [{ query: "x", limit: 0 }, /limit/],
    [{ query: "x", include: { notes: "yes" } }, /include/],
  ])("rejects %j", async (body, message) => {
    const [status, response] = await server.call("POST", "/v1/context/build", { body });
    expect(status).toBe(400);
    expect(response.error.message).toMatch(message);
  });
});

describe("isolation: another user's memories do not exist for you", () => {
  test("get, delete, list, search and context build never reach another user's data", async () => {
    const s = await startTestServer();
    const [, secret] = await s.call("POST", "/v1/memories", {
      token: ALICE,
      body: { content: "alice secret pineapple", metadata: { k: "v" } },
    });
    const missing = await s.call("GET", "/v1/memories/mem_00000000000000000000000000", { token: BOB });
    expect(await s.call("GET", `/v1/memories/${secret.id}`, { token: BOB })).toEqual([
      404,
      { error: { code: "not_found", message: `memory '${secret.id}' not found` } },
    ]);
    expect(missing[0]).toBe(404);
    expect((await s.call("DELETE", `/v1/memories/${secret.id}`, { token: BOB }))[0]).toBe(404);
    expect(await s.call("GET", "/v1/memories", { token: BOB })).toEqual([
      200,
      { data: [], nextCursor: null, hasMore: false },
    ]);
    const [, search] = await s.call("POST", "/v1/memories/search", {
      token: BOB,
      body: { query: "pineapple", filters: { k: "v" } },
    });
    expect(search.results).toEqual([]);
    const [, context] = await s.call("POST", "/v1/context/build", {
      token: BOB,
      body: { query: "pineapple", include: { notes: true, files: true } },
    });
    expect(context.items).toEqual([]);
    // Alice still has it, untouched by Bob's delete attempt.
    expect(await s.call("GET", `/v1/memories/${secret.id}`, { token: ALICE })).toEqual([200, secret]);
    // Owner ids that look like filter syntax do not leak across users either.
    const [, sneaky] = await s.call("POST", "/v1/memories/search", {
      token: "mock-token-x'OR(owner_id<>'x')OR'",
      body: { query: "pineapple" },
    });
    expect(sneaky.results).toEqual([]);
    await s.destroy();
  });
});

describe("conversation context", () => {
  test("within a session, a reply is found by the question it answers; outside one, memories stand alone", async () => {
    const s = await startTestServer();
    const turns = [
      "Dana: How long have you two been married?",
      "Eli: Twelve wonderful years now",
      "Dana: Where did you go last summer?",
    ];
    for (const content of turns) await s.call("POST", "/v1/memories", { body: { content, session_id: "chat-1" } });
    await s.call("POST", "/v1/memories", { body: { content: "Standalone: I repaired the fence" } });
    await s.call("POST", "/v1/memories", { body: { content: "Standalone: married friends visited" } });

    const [, body] = await s.call("POST", "/v1/memories/search", { body: { query: "how long married", limit: 5 } });
    const found = body.results.map((r: { content: string }) => r.content);
    // The answer shares no word with the query: only its preceding turn (the question) makes it match.
    expect(found).toContain("Eli: Twelve wonderful years now");
    expect(found.indexOf("Dana: How long have you two been married?")).toBe(0);
    // Memories without a session are not context for each other.
    expect(found).not.toContain("Standalone: I repaired the fence");
    await s.destroy();
  });

  test("a table gets its context indices with its first conversation, and finds replies by their context from then on", async () => {
    const s = await startTestServer();
    const table = textTable("alice", "mem");
    await s.call("POST", "/v1/memories", { body: { content: "Standalone: the lighthouse keeper retired" } });
    await s.services.indexer.drain();
    // No context yet: only the text column is indexed (a third of the full-text work).
    expect(await indexedColumns(s.dataDir, table)).toEqual(["text"]);
    for (const content of ["Q: who painted the lighthouse door?", "A: my neighbour Ruth did"]) {
      await s.call("POST", "/v1/memories", { body: { content, session_id: "paint" } });
    }
    await s.services.indexer.drain();
    const [, body] = await s.call("POST", "/v1/memories/search", { body: { query: "painted lighthouse door" } });
    // The answer shares no word with the query: its question, as context, finds it.
    expect(body.results.map((r: { content: string }) => r.content)).toContain("A: my neighbour Ruth did");
    expect(await indexedColumns(s.dataDir, table)).toEqual(["context_after", "context_before", "text"]);
    // Once compaction folds the rows into the indices, the same.
    await s.services.indexer.settle();
    const [, again] = await s.call("POST", "/v1/memories/search", { body: { query: "painted lighthouse door" } });
    expect(again.results.map((r: { content: string }) => r.content)).toEqual(
      body.results.map((r: { content: string }) => r.content),
    );
    await s.destroy();
  });

  test("deleting a memory removes it as context from its neighbours", async () => {
    const s = await startTestServer();
    const ids: string[] = [];
    for (const content of ["Q: which bakery sells sourdough pretzels?", "A: the corner one", "B: thanks!"]) {
      const [, created] = await s.call("POST", "/v1/memories", { body: { content, session_id: "s-del" } });
      ids.push(created.id);
    }
    const search = async () =>
      (await s.call("POST", "/v1/memories/search", { body: { query: "sourdough pretzels" } }))[1].results.map(
        (r: { content: string }) => r.content,
      );
    expect(await search()).toEqual(["Q: which bakery sells sourdough pretzels?", "A: the corner one", "B: thanks!"]);
    await s.call("DELETE", `/v1/memories/${ids[0]}`);
    expect(await search()).toEqual([]);
    await s.destroy();
  });
});
