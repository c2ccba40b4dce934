import { afterAll, describe, expect, test } from "bun:test";
import { startTestServer } from "./helpers/server";
import { apiError, createDocument, createWorkspace, queryIds } from "./helpers/workspaces";

const server = await startTestServer();
afterAll(() => server.destroy());

/** A LegacyIndexStatus with everything zero, overridden by `fields`. */
const statusOf = (workspaceId: string, fields: Record<string, unknown> = {}) => ({
  workspaceId,
  status: "ready",
  note: null,
  documents: { stored: 0, indexed: 0, unindexed: 0, stale: 0, outdated: 0 },
  blocks: 0,
  vectors: 0,
  messages: 0,
  pending: { text: 0, vector: 0 },
  lastIndexedAt: null,
  indexerLastRunAt: expect.any(String),
  embeddingModel: null,
  vectorDimension: null,
  ...fields,
});
const counts = (fields: Record<string, number>) => ({
  stored: 0,
  indexed: 0,
  unindexed: 0,
  stale: 0,
  outdated: 0,
  ...fields,
});
const status = async (ws: string) => (await server.call("GET", `/v1/workspaces/${ws}/index/status`))[1];

describe("index/status", () => {
  test("counts documents, indexed blocks and messages of the workspace", async () => {
    // Something indexed first, so this server's indexer has a last run time.
    await createDocument(server, await createWorkspace(server, "Warm-up"), {
      title: "Warm-up",
      indexable_blocks: [{ id: "w", content: "warm" }],
    });
    await queryIds(server, { query: "warm" });
    const ws = await createWorkspace(server, "Status");
    const [s0, empty] = await server.call("GET", `/v1/workspaces/${ws}/index/status`);
    await createDocument(server, ws, {
      title: "Two blocks",
      indexable_blocks: [
        { id: "a", content: "alpha" },
        { id: "b", content: "beta" },
        { id: "c", content: "  " },
      ],
    });
    const [, thread] = await server.call("POST", `/v1/workspaces/${ws}/chats`, { body: { title: "T" } });
    await server.call("POST", `/v1/workspaces/${ws}/chats/${thread.id}/messages`, {
      body: { role: "user", content: "hello" },
    });
    const after = await status(ws);
    expect({ s0, empty, after }).toEqual({
      s0: 200,
      empty: statusOf(ws),
      // Blocks: the two non-blank blocks and the title.
      after: statusOf(ws, {
        documents: counts({ stored: 1, indexed: 1 }),
        blocks: 3,
        messages: 1,
        lastIndexedAt: expect.any(String),
      }),
    });
  });
});

describe("legacy vs unified index behaviour", () => {
  test("legacy writes leave the index alone (a delete excepted: it leaves search at once); reindex rebuilds it from the stored documents", async () => {
    const ws = await createWorkspace(server, "Two views");
    const notes = `/v1/workspaces/${ws}/notes`;
    const kept = await createDocument(server, ws, {
      title: "Kept",
      indexable_blocks: [{ id: "k1", content: "otters swim" }],
    });
    const legacyDeleted = await createDocument(server, ws, {
      title: "Doomed",
      indexable_blocks: [{ id: "d1", content: "beavers build" }],
    });
    const [, legacyNote] = await server.call("POST", notes, {
      body: { documentPayload: {}, blocksPayload: [], indexableBlocks: [{ id: "n1", content: "herons wait" }] },
    });
    await server.call("PATCH", `${notes}/${kept.id}`, {
      body: { indexableBlocks: [{ id: "k1", content: "otters float" }] },
    });
    await server.call("DELETE", `${notes}/${legacyDeleted.id}`);

    const before = {
      status: await status(ws),
      legacyNote: await queryIds(server, { workspace_id: ws, query: "herons" }),
      legacyPatch: await queryIds(server, { workspace_id: ws, query: "float" }),
      oldText: await queryIds(server, { workspace_id: ws, query: "swim" }),
      legacyDeleted: await queryIds(server, { workspace_id: ws, query: "beavers" }),
    };
    const [reindexStatus, reindexed] = await server.call("POST", `/v1/workspaces/${ws}/reindex`);
    const after = {
      legacyNote: await queryIds(server, { workspace_id: ws, query: "herons" }),
      legacyPatch: await queryIds(server, { workspace_id: ws, query: "float" }),
      oldText: await queryIds(server, { workspace_id: ws, query: "swim" }),
      legacyDeleted: await queryIds(server, { workspace_id: ws, query: "beavers" }),
    };
    // Blocks: one block and one title per indexed document.
    const rebuilt = statusOf(ws, {
      documents: counts({ stored: 2, indexed: 2 }),
      blocks: 4,
      lastIndexedAt: expect.any(String),
    });
    expect({ before, reindexStatus, reindexed, after }).toEqual({
      before: {
        status: statusOf(ws, {
          documents: counts({ stored: 2, indexed: 1, unindexed: 1, outdated: 1 }),
          blocks: 2,
          lastIndexedAt: expect.any(String),
        }),
        legacyNote: [],
        legacyPatch: [],
        oldText: ["k1"],
        legacyDeleted: [],
      },
      reindexStatus: 200,
      reindexed: {
        message: `reindexed 2 document(s) of workspace ${ws}; removed 0 stale entries`,
        status: "ready",
        indexStatus: rebuilt,
      },
      after: { legacyNote: ["n1"], legacyPatch: ["k1"], oldText: [], legacyDeleted: [] },
    });
    expect(legacyNote.id).toBeString();
  });

  test("a unified delete removes the document's index entries at once", async () => {
    const ws = await createWorkspace(server, "Unified delete");
    const doc = await createDocument(server, ws, {
      title: "Short-lived",
      indexable_blocks: [{ id: "s", content: "mayflies" }],
    });
    await server.call("DELETE", `/v1/workspaces/${ws}/documents/${doc.id}`);
    expect({ hits: await queryIds(server, { workspace_id: ws, query: "mayflies" }), status: await status(ws) }).toEqual(
      {
        hits: [],
        status: statusOf(ws),
      },
    );
  });
});

describe("index/clear and reindex", () => {
  test("clear empties the workspace's index but keeps its documents; reindex restores it", async () => {
    const ws = await createWorkspace(server, "Clearable");
    const other = await createWorkspace(server, "Untouched");
    await createDocument(server, ws, { title: "One", indexable_blocks: [{ id: "c1", content: "puffins nest" }] });
    await createDocument(server, other, {
      title: "Elsewhere",
      indexable_blocks: [{ id: "o1", content: "puffins fly" }],
    });
    const [clearStatus, cleared] = await server.call("POST", `/v1/workspaces/${ws}/index/clear`);
    const afterClear = { status: await status(ws), hits: await queryIds(server, { query: "puffins" }) };
    const [, documents] = await server.call("GET", `/v1/workspaces/${ws}/documents`);
    await server.call("POST", `/v1/workspaces/${ws}/reindex`);
    const afterReindex = await queryIds(server, { workspace_id: ws, query: "puffins" });
    expect({ clearStatus, cleared, afterClear, documents: documents.documents.length, afterReindex }).toEqual({
      clearStatus: 200,
      cleared: { success: true, message: `cleared 1 document(s) from the index of workspace ${ws}` },
      afterClear: { status: statusOf(ws, { documents: counts({ stored: 1, unindexed: 1 }) }), hits: ["o1"] },
      documents: 1,
      afterReindex: ["c1"],
    });
  });
});

describe("index/raw and search/block-index", () => {
  test("raw is the derived index; block-index is the client's copy when PUT, else the derived one", async () => {
    const ws = await createWorkspace(server, "Raw");
    const doc = await createDocument(server, ws, {
      title: "Raw doc",
      document_type: "page",
      indexable_blocks: [
        { id: "r1", type: "heading", content: "Title", extra: 1 },
        { id: "r2", content: "body" },
      ],
    });
    const [rawStatus, raw] = await server.call("GET", `/v1/workspaces/${ws}/index/raw`);
    const [, derived] = await server.call("GET", `/v1/workspaces/${ws}/search/block-index`);
    const mine = { version: 7, blocks: { r1: [0.1, 0.2] } };
    const [putStatus, put] = await server.call("PUT", `/v1/workspaces/${ws}/search/block-index`, {
      body: { index: mine },
    });
    const [, stored] = await server.call("GET", `/v1/workspaces/${ws}/search/block-index`);
    await server.call("POST", `/v1/workspaces/${ws}/reindex`);
    const [, afterReindex] = await server.call("GET", `/v1/workspaces/${ws}/search/block-index`);
    const expectedRaw = {
      version: 1,
      source: "derived",
      workspaceId: ws,
      blockCount: 2,
      documents: [
        {
          id: doc.id,
          title: "Raw doc",
          documentType: "page",
          indexedAt: expect.any(String),
          blocks: [
            { id: "r1", type: "heading", content: "Title" },
            { id: "r2", type: "text", content: "body" },
          ],
        },
      ],
    };
    expect({ rawStatus, raw, derived, putStatus, put, stored, afterReindex }).toEqual({
      rawStatus: 200,
      raw: { ...expectedRaw, nextCursor: null, hasMore: false },
      derived: { index: expectedRaw },
      putStatus: 200,
      put: { index: mine },
      stored: { index: mine },
      afterReindex: { index: expectedRaw },
    });
  });
});

describe("vector-manifest and graph/block-edges", () => {
  test("the manifest is derived until PUT, then stored as sent", async () => {
    const ws = await createWorkspace(server, "Manifest");
    const [, derived] = await server.call("GET", `/v1/workspaces/${ws}/vector-manifest`);
    const manifest = { model: "client-model", dims: 384, entries: [{ id: "b1", offset: 0 }] };
    const [putStatus, put] = await server.call("PUT", `/v1/workspaces/${ws}/vector-manifest`, { body: { manifest } });
    const [, stored] = await server.call("GET", `/v1/workspaces/${ws}/vector-manifest`);
    expect({ derived, putStatus, put, stored }).toEqual({
      derived: {
        manifest: { version: 1, source: "derived", workspaceId: ws, embeddingModel: null, dimension: null, vectors: 0 },
      },
      putStatus: 200,
      put: { manifest },
      stored: { manifest },
    });
  });

  test("edges derive from [[wiki links]] and ((block refs)) until the client PUTs its own", async () => {
    const ws = await createWorkspace(server, "Graph");
    const target = await createDocument(server, ws, {
      title: "Bird Atlas",
      indexable_blocks: [{ id: "atlas-1", content: "maps" }],
    });
    const source = await createDocument(server, ws, {
      title: "Journal",
      indexable_blocks: [
        { id: "j1", content: "see [[Bird Atlas|the atlas]] and [[Missing Page]], quoting ((atlas-1)) and ((ghost))" },
      ],
    });
    const [, derived] = await server.call("GET", `/v1/workspaces/${ws}/graph/block-edges`);
    const from = { documentId: source.id, blockId: "j1" };
    const edges = [{ from: "a", to: "b" }];
    const [, putArray] = await server.call("PUT", `/v1/workspaces/${ws}/graph/block-edges`, { body: { edges } });
    const [, storedArray] = await server.call("GET", `/v1/workspaces/${ws}/graph/block-edges`);
    const [, putObject] = await server.call("PUT", `/v1/workspaces/${ws}/graph/block-edges`, {
      body: { edges: { a: ["b"] } },
    });
    expect({ derived, putArray, storedArray, putObject }).toEqual({
      derived: {
        edges: [
          { type: "wiki_link", from, to: { documentId: target.id, blockId: null }, target: "Bird Atlas" },
          { type: "wiki_link", from, to: { documentId: null, blockId: null }, target: "Missing Page" },
          { type: "block_ref", from, to: { documentId: target.id, blockId: "atlas-1" }, target: "atlas-1" },
          { type: "block_ref", from, to: { documentId: null, blockId: "ghost" }, target: "ghost" },
        ],
      },
      putArray: { edges },
      storedArray: { edges },
      putObject: { edges: { a: ["b"] } },
    });
  });

  test.each([
    ["search/block-index", "index"],
    ["vector-manifest", "manifest"],
    ["graph/block-edges", "edges"],
  ])("PUT %s validates its body and refuses more than 5 MB", async (route, field) => {
    const ws = await createWorkspace(server, "Limits");
    const [missing, missingBody] = await server.call("PUT", `/v1/workspaces/${ws}/${route}`, { body: {} });
    const [wrong, wrongBody] = await server.call("PUT", `/v1/workspaces/${ws}/${route}`, { body: { [field]: "text" } });
    const big = { [field]: { blob: "x".repeat(5 * 1024 * 1024) } };
    const [tooBig, tooBigBody] = await server.call("PUT", `/v1/workspaces/${ws}/${route}`, { body: big });
    expect({ missing, missingBody, wrong, wrongCode: wrongBody.error.code, tooBig, tooBigBody }).toEqual({
      missing: 400,
      missingBody: apiError("invalid_request", `${field}: expected required property`),
      wrong: 400,
      wrongCode: "invalid_request",
      tooBig: 413,
      tooBigBody: apiError(
        "payload_too_large",
        `${field}: is ${5 * 1024 * 1024 + 11} bytes; the limit is 5242880 bytes (5 MB)`,
      ),
    });
  });
});

describe("unknown workspaces", () => {
  test.each([
    ["GET", "index/status", undefined],
    ["GET", "index/raw", undefined],
    ["POST", "index/clear", undefined],
    ["POST", "reindex", undefined],
    ["GET", "vector-manifest", undefined],
    ["PUT", "vector-manifest", { manifest: {} }],
    ["GET", "search/block-index", undefined],
    ["PUT", "search/block-index", { index: {} }],
    ["GET", "graph/block-edges", undefined],
    ["PUT", "graph/block-edges", { edges: [] }],
  ] as Array<[string, string, unknown]>)("%s %s answers 404", async (method, route, body) => {
    const [status, answer] = await server.call(method, `/v1/workspaces/ws_nope/${route}`, { body });
    expect({ status, answer }).toEqual({ status: 404, answer: apiError("not_found", "workspace 'ws_nope' not found") });
  });
});
