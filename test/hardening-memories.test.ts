import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { all, sql } from "../src/db/store";
import { startTestServer, type TestServer } from "./helpers/server";
import { apiError, createWorkspace } from "./helpers/workspaces";

let server: TestServer;
let aliceWs: string;
let bobWs: string;
beforeAll(async () => {
  server = await startTestServer();
  aliceWs = await createWorkspace(server, "alice's");
  bobWs = await createWorkspace(server, "bob's", "mock-token-bob");
});
afterAll(() => server.destroy());

const BOB = "mock-token-bob";
const manyKeys = (n: number, prefix = "k") =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, i]));
const search = (filters: unknown, token?: string) =>
  server.call("POST", "/v1/memories/search", { body: { query: "anything", filters }, token });

describe("search filters are capped at 32 keys", () => {
  test("32 keys, counting those inside metadata, are accepted", async () => {
    expect((await search(manyKeys(32)))[0]).toBe(200);
    expect((await search({ ...manyKeys(16), metadata: manyKeys(16, "m") }))[0]).toBe(200);
  });

  test("33 keys at the top level or in metadata are a 400 naming the field", async () => {
    const [status, body] = await search(manyKeys(33));
    expect([status, body.error.code]).toEqual([400, "invalid_request"]);
    expect(body.error.message).toMatch(/^filters: /);
    const [inMetadata, metadataBody] = await search({ metadata: manyKeys(33) });
    expect([inMetadata, metadataBody.error.message]).toEqual([400, expect.stringMatching(/^filters\.metadata: /)]);
  });

  test("keys split between the top level and metadata count together", async () => {
    expect(await search({ ...manyKeys(17), metadata: manyKeys(16, "m") })).toEqual([
      400,
      apiError("invalid_request", "filters: has 33 keys (counting those in filters.metadata); at most 32 are allowed"),
    ]);
  });

  test("10,000 keys are refused (the issue's slow case)", async () => {
    const [status, body] = await search(manyKeys(10_000));
    expect([status, body.error.message]).toEqual([400, expect.stringMatching(/^filters: /)]);
  });

  test("the cap holds in context build and in the documents query's metadata.filters", async () => {
    const [context, contextBody] = await server.call("POST", "/v1/context/build", {
      body: { query: "x", filters: manyKeys(40) },
    });
    expect([context, contextBody.error.message]).toEqual([400, expect.stringMatching(/^filters: /)]);
    const [query] = await server.call("POST", "/v1/documents/query", {
      body: { query: "x", metadata: { filters: manyKeys(40) } },
    });
    expect(query).toBe(400);
  });
});

describe("a memory's workspace must be the caller's", () => {
  test("a nonexistent workspace id is a 404 and nothing is stored", async () => {
    const [status, body] = await server.call("POST", "/v1/memories", {
      body: { content: "orphan", workspaceId: "ws_nope" },
    });
    expect([status, body]).toEqual([404, apiError("not_found", "workspace 'ws_nope' not found")]);
    const [, list] = await server.call("GET", "/v1/memories");
    expect(list.data.map((m: { content: string }) => m.content)).not.toContain("orphan");
  });

  test("another user's workspace answers exactly like a missing one, under either spelling", async () => {
    for (const body of [
      { content: "sneaky", workspaceId: bobWs },
      { content: "sneaky", workspace_id: bobWs },
    ]) {
      expect(await server.call("POST", "/v1/memories", { body })).toEqual([
        404,
        apiError("not_found", `workspace '${bobWs}' not found`),
      ]);
    }
  });

  test("the owner's workspace is accepted", async () => {
    const [status, body] = await server.call("POST", "/v1/memories", {
      body: { content: "mine", workspace_id: aliceWs },
    });
    expect([status, body.workspaceId, body.projectId]).toEqual([201, aliceWs, aliceWs]);
    expect(
      (await server.call("POST", "/v1/memories", { token: BOB, body: { content: "bob's", workspaceId: bobWs } }))[0],
    ).toBe(201);
  });
});

describe("aliases that disagree are a 400 naming both", () => {
  test.each([
    [{ workspaceId: "ws_a", workspace_id: "ws_b" }, "workspaceId, workspace_id"],
    [{ session_id: "s1", sessionId: "s2" }, "session_id, sessionId"],
  ])("create with %j", async (fields, names) => {
    const [status, body] = await server.call("POST", "/v1/memories", { body: { content: "which one?", ...fields } });
    expect([status, body]).toEqual([
      400,
      apiError("invalid_request", `${names}: are aliases of one field and differ; send one of them`),
    ]);
  });

  test("the same value under both spellings is fine", async () => {
    const [status, body] = await server.call("POST", "/v1/memories", {
      body: { content: "both spellings", workspaceId: aliceWs, workspace_id: aliceWs, session_id: "s", sessionId: "s" },
    });
    expect([status, body.workspaceId, body.session_id]).toEqual([201, aliceWs, "s"]);
  });

  test.each([
    [
      { workspaceId: "a", workspace_id: "b" },
      "filters.workspaceId, filters.workspace_id: are aliases of one field and differ",
    ],
    [{ session_id: "a", sessionId: "b" }, "filters.session_id, filters.sessionId: are aliases of one field and differ"],
    [{ topic: "a", metadata: { topic: "b" } }, "filters.topic, filters.metadata.topic: name the same thing and differ"],
  ])("search filters %j", async (filters, names) => {
    expect(await search(filters)).toEqual([400, apiError("invalid_request", `${names}; send one of them`)]);
    const [context, body] = await server.call("POST", "/v1/context/build", { body: { query: "x", filters } });
    expect([context, body.error.message]).toEqual([400, expect.stringContaining(names)]);
  });

  test("agreeing filter spellings search as one condition", async () => {
    const [status, body] = await search({
      workspaceId: aliceWs,
      workspace_id: aliceWs,
      topic: "t",
      metadata: { topic: "t" },
    });
    expect([status, body.results]).toEqual([200, []]);
  });
});

describe("memory list cursors are opaque and per owner", () => {
  let pager: TestServer;
  let cursor: string;
  beforeAll(async () => {
    pager = await startTestServer();
    for (let i = 0; i < 3; i++) await pager.call("POST", "/v1/memories", { body: { content: `page memory ${i}` } });
    [, { nextCursor: cursor }] = await pager.call("GET", "/v1/memories?limit=1");
  });
  afterAll(() => pager.destroy());

  test("the cursor does not carry the sequence number", async () => {
    const seqs = await all<{ seq: number }>(pager.services.store.db, sql`SELECT seq FROM memories ORDER BY seq`);
    const pageEnd = seqs[seqs.length - 1].seq;
    // The old cursor was base64url("m1:<seq>"); neither form appears, nor does the text decode to one.
    expect(cursor).not.toContain(Buffer.from(`m1:${pageEnd}`).toString("base64url"));
    expect(Buffer.from(cursor, "base64url").toString("latin1")).not.toMatch(/m1:\d/);
    const [status, next] = await pager.call("GET", `/v1/memories?limit=5&cursor=${cursor}`);
    expect([status, next.data.map((m: { content: string }) => m.content)]).toEqual([
      200,
      ["page memory 1", "page memory 0"],
    ]);
  });

  test("another user's cursor is refused", async () => {
    expect(await pager.call("GET", `/v1/memories?cursor=${cursor}`, { token: BOB })).toEqual([
      400,
      apiError("invalid_request", "cursor: is not a cursor returned by this API"),
    ]);
  });

  test("a tampered cursor and an old-style cursor are refused", async () => {
    const bytes = Buffer.from(cursor, "base64url");
    bytes[bytes.length - 1] ^= 1;
    const forged = Buffer.from("m1:2").toString("base64url");
    for (const bad of [bytes.toString("base64url"), forged]) {
      expect(await pager.call("GET", `/v1/memories?cursor=${bad}`)).toEqual([
        400,
        apiError("invalid_request", "cursor: is not a cursor returned by this API"),
      ]);
    }
  });
});
