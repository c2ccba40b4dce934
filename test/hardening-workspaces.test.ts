import { afterAll, describe, expect, test } from "bun:test";
import { startFakeEmbedder } from "./helpers/fake-embedder";
import { mock, startTestServer, type TestServer } from "./helpers/server";
import { apiError, createDocument, createWorkspace, queryIds } from "./helpers/workspaces";

const server = await startTestServer();
afterAll(() => server.destroy());

/** `[status, body, next-page cursor header]` of a GET, for the lists answered as bare arrays. */
async function getPage(path: string, token = mock("alice")): Promise<[number, any, string | null]> {
  const response = await fetch(server.url + path, { headers: { authorization: `Bearer ${token}` } });
  return [response.status, await response.json(), response.headers.get("x-next-cursor")];
}

/** Every page of a bare-array list, following X-Next-Cursor; returns the page sizes and all items. */
async function allPages(path: string, token?: string): Promise<{ sizes: number[]; items: any[] }> {
  const sizes: number[] = [];
  const items: any[] = [];
  for (let cursor: string | null = null; ; ) {
    const sep = path.includes("?") ? "&" : "?";
    const [status, body, next]: [number, any, string | null] = await getPage(
      cursor ? `${path}${sep}cursor=${encodeURIComponent(cursor)}` : path,
      token,
    );
    if (status !== 200) throw new Error(`${path}: ${status} ${JSON.stringify(body)}`);
    sizes.push(body.length);
    items.push(...body);
    if (!next) return { sizes, items };
    cursor = next;
  }
}

// Full text alone: these tests check which blocks the index holds, not the word vectors' neighbours.
const context = (body: Record<string, unknown>) =>
  server.call("POST", "/v1/context/build", { body: { signals: ["text"], ...body } });
const query = (body: Record<string, unknown>) => server.call("POST", "/v1/documents/query", { body });

describe("a document with only a title and markdown", () => {
  test("is found by its title and by words of its markdown, through the documents query and context build", async () => {
    const ws = await createWorkspace(server, "Markdown only");
    const doc = await createDocument(server, ws, {
      title: "Kestrel survey",
      root_block_id: "kestrel-root",
      markdown:
        "# Habitat\n\nKestrels hover over meadows.\nThey nest in church towers.\n\n## Diet\n\n```\nvoles: 80%\n```\n\nMostly voles and beetles.",
    });
    const [, raw] = await server.call("GET", `/v1/workspaces/${ws}/index/raw`);
    const byTitle = await queryIds(server, { workspace_id: ws, query: "survey" });
    const byBody = await queryIds(server, { workspace_id: ws, query: "meadows" });
    const byHeading = await queryIds(server, { workspace_id: ws, query: "habitat" });
    const [, built] = await context({ query: "beetles", workspace_id: ws, include: { memories: false, notes: true } });
    const [, builtTitle] = await context({
      query: "survey",
      workspace_id: ws,
      include: { memories: false, notes: true },
    });
    expect({
      blocks: raw.documents[0].blocks,
      byTitle,
      byBody,
      byHeading,
      built: built.items,
      builtTitle: builtTitle.items.map((i: any) => i.id),
    }).toEqual({
      blocks: [
        { id: "md-1", type: "heading", content: "# Habitat" },
        { id: "md-2", type: "paragraph", content: "Kestrels hover over meadows.\nThey nest in church towers." },
        { id: "md-3", type: "heading", content: "## Diet" },
        { id: "md-4", type: "code", content: "```\nvoles: 80%\n```" },
        { id: "md-5", type: "paragraph", content: "Mostly voles and beetles." },
      ],
      byTitle: ["kestrel-root"],
      byBody: ["md-2"],
      byHeading: ["md-1"],
      built: [
        {
          type: "note",
          id: "md-5",
          score: expect.any(Number),
          content: "Mostly voles and beetles.",
          documentId: doc.id,
          workspaceId: ws,
        },
      ],
      builtTitle: ["kestrel-root"],
    });
  });

  test("indexable blocks, when given, are indexed instead of the markdown (the title still is)", async () => {
    const ws = await createWorkspace(server, "Blocks win");
    await createDocument(server, ws, {
      title: "Heron log",
      markdown: "Herons fish in shallows.",
      indexable_blocks: [{ id: "h1", content: "grey herons wait" }],
    });
    expect({
      title: await queryIds(server, { workspace_id: ws, query: "log" }),
      block: await queryIds(server, { workspace_id: ws, query: "wait" }),
      markdown: await queryIds(server, { workspace_id: ws, query: "shallows" }),
    }).toEqual({ title: [expect.stringMatching(/^blk_/)], block: ["h1"], markdown: [] });
  });

  test("encrypted markdown (iv:tag:ct, or an envelope) is never indexed; the title is", async () => {
    const ws = await createWorkspace(server, "Encrypted");
    await createDocument(server, ws, { title: "Secret plans", markdown: "0a1b2c3d4e5f:deadbeefcafe:0123456789abcdef" });
    await createDocument(server, ws, {
      title: "Envelope plans",
      markdown: JSON.stringify({ format: "svc.om.encrypted", ciphertext: "aa:bb:cc" }),
    });
    const [, raw] = await server.call("GET", `/v1/workspaces/${ws}/index/raw`);
    expect({
      blocks: raw.documents.map((d: any) => d.blocks),
      hex: await queryIds(server, { workspace_id: ws, query: "deadbeefcafe" }),
      envelope: await queryIds(server, { workspace_id: ws, query: "ciphertext" }),
      titles: (await queryIds(server, { workspace_id: ws, query: "plans" })).length,
    }).toEqual({ blocks: [[], []], hex: [], envelope: [], titles: 2 });
  });

  test("a markdown edit through PATCH reaches the index", async () => {
    const ws = await createWorkspace(server, "Edited");
    const doc = await createDocument(server, ws, { title: "Draft", markdown: "Ospreys dive." });
    await server.call("PATCH", `/v1/documents/${doc.id}`, {
      body: { workspace_id: ws, markdown: "Ospreys plunge feet first." },
    });
    expect({
      old: await queryIds(server, { workspace_id: ws, query: "dive" }),
      now: await queryIds(server, { workspace_id: ws, query: "plunge" }),
    }).toEqual({ old: [], now: ["md-1"] });
  });
});

describe("paginated lists", () => {
  test("workspaces: ?limit= and X-Next-Cursor page through them; default 50, at most 200", async () => {
    const carol = mock("carol-pages");
    const ids: string[] = [];
    for (let i = 0; i < 53; i++) ids.push(await createWorkspace(server, `W${i}`, carol));
    const byDefault = await allPages("/v1/workspaces", carol);
    const small = await allPages("/v1/workspaces?limit=20", carol);
    const [tooBig, tooBigBody] = await getPage("/v1/workspaces?limit=201", carol);
    const [zero] = await getPage("/v1/workspaces?limit=0", carol);
    expect({
      byDefault: byDefault.sizes,
      same: byDefault.items.map((w) => w.id),
      small: small.sizes,
      smallSame: small.items.map((w) => w.id),
      tooBig,
      tooBigMessage: tooBigBody.error.message,
      zero,
    }).toEqual({
      byDefault: [50, 3],
      same: ids,
      small: [20, 20, 13],
      smallSame: ids,
      tooBig: 400,
      tooBigMessage: expect.stringContaining("limit"),
      zero: 400,
    });
  });

  test("a cursor only works for the user and the list it was made for", async () => {
    const dave = mock("dave-pages");
    for (let i = 0; i < 3; i++) await createWorkspace(server, `D${i}`, dave);
    const [, , cursor] = await getPage("/v1/workspaces?limit=1", dave);
    const ws = await createWorkspace(server, "Other list", dave);
    const [otherUser, otherUserBody] = await getPage(`/v1/workspaces?cursor=${cursor}`, mock("eve-pages"));
    const [otherList, otherListBody] = await getPage(`/v1/workspaces/${ws}/notes?cursor=${cursor}`, dave);
    const [garbage] = await getPage("/v1/workspaces?cursor=bm90LWEtY3Vyc29y", dave);
    const refused = apiError("invalid_request", "cursor: is not a cursor returned by this API");
    expect({ otherUser, otherUserBody, otherList, otherListBody, garbage }).toEqual({
      otherUser: 400,
      otherUserBody: refused,
      otherList: 400,
      otherListBody: refused,
      garbage: 400,
    });
  });

  test("notes, documents and index/raw page through a workspace's documents", async () => {
    const ws = await createWorkspace(server, "Many notes");
    for (let i = 0; i < 7; i++)
      await createDocument(server, ws, {
        title: `Note ${i}`,
        indexable_blocks: [{ id: `n${i}`, content: `note ${i}` }],
      });
    const notes = await allPages(`/v1/workspaces/${ws}/notes?limit=3`);
    const documents: number[] = [];
    const raw: number[] = [];
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const [, page] = await server.call(
        "GET",
        `/v1/workspaces/${ws}/documents?limit=3${cursor ? `&cursor=${cursor}` : ""}`,
      );
      documents.push(page.documents.length);
      cursor = page.nextCursor;
    }
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const [, page] = await server.call(
        "GET",
        `/v1/workspaces/${ws}/index/raw?limit=3${cursor ? `&cursor=${cursor}` : ""}`,
      );
      raw.push(page.documents.length);
      expect(page.hasMore).toBe(page.nextCursor !== null);
      cursor = page.nextCursor;
    }
    expect({ notes: notes.sizes, noteIds: new Set(notes.items.map((n) => n.id)).size, documents, raw }).toEqual({
      notes: [3, 3, 1],
      noteIds: 7,
      documents: [3, 3, 1],
      raw: [3, 3, 1],
    });
  });

  test("a notes page stops early once it holds 8 MB of stored content", async () => {
    const ws = await createWorkspace(server, "Big notes");
    const markdown = "x".repeat(3 * 1024 * 1024);
    for (let i = 0; i < 4; i++)
      await server.call("POST", `/v1/workspaces/${ws}/notes`, {
        body: { documentPayload: { i }, blocksPayload: [], markdown },
      });
    expect((await allPages(`/v1/workspaces/${ws}/notes`)).sizes).toEqual([2, 2]);
  });
});

describe("conflicting aliases", () => {
  test("two spellings of one field with different values are a 400 naming both", async () => {
    const ws = await createWorkspace(server, "Aliases");
    const other = await createWorkspace(server, "Aliases 2");
    const doc = await createDocument(server, ws, { title: "Aliased" });
    const cases: Array<[string, string, Record<string, unknown> | undefined, string]> = [
      ["POST", "/v1/documents", { workspace_id: ws, workspaceId: other, title: "x" }, "workspace_id, workspaceId"],
      [
        "POST",
        "/v1/documents",
        { workspace_id: ws, title: "x", document_type: "a", documentType: "b" },
        "document_type, documentType",
      ],
      [
        "POST",
        "/v1/documents",
        { workspace_id: ws, title: "x", metadata: { a: 1 }, _meta: { a: 2 } },
        "metadata, _meta",
      ],
      [
        "POST",
        `/v1/workspaces/${ws}/documents`,
        { title: "x", notebook_id: "a", notebookId: "b" },
        "notebook_id, notebookId",
      ],
      ["PATCH", `/v1/documents/${doc.id}`, { workspace_id: ws, workspaceId: other }, "workspace_id, workspaceId"],
      [
        "DELETE",
        `/v1/documents/${doc.id}?workspace_id=${ws}&workspaceId=${other}`,
        undefined,
        "workspace_id, workspaceId",
      ],
      [
        "POST",
        "/v1/documents/query",
        { query: "x", workspace_id: ws, workspaceId: other },
        "workspace_id, workspaceId",
      ],
      ["POST", "/v1/documents/query", { query: "x", top_k: 1, topK: 2 }, "top_k, topK"],
      [
        "POST",
        "/v1/documents/query",
        { query: "x", filter: { eq: { document_type: "a", documentType: "b" } } },
        "filter.eq.document_type, filter.eq.documentType",
      ],
      [
        "POST",
        "/v1/documents/query",
        { query: "x", workspace_id: ws, metadata: { filters: { workspaceId: other } } },
        "workspace_id, metadata.filters.workspaceId",
      ],
      ["POST", "/v1/context/build", { query: "x", workspace_id: ws, workspaceId: other }, "workspace_id, workspaceId"],
      [
        "POST",
        "/v1/context/build",
        { query: "x", filters: { session_id: "a", sessionId: "b" } },
        "filters.session_id, filters.sessionId",
      ],
    ];
    const answers = await Promise.all(cases.map(([method, path, body]) => server.call(method, path, { body })));
    expect(answers.map(([status, body]) => [status, body.error?.message.split(":")[0]])).toEqual(
      cases.map((c) => [400, c[3]]),
    );
    // The same value under both spellings is fine.
    const [same] = await server.call("POST", "/v1/documents", {
      body: { workspace_id: ws, workspaceId: ws, title: "Same" },
    });
    expect(same).toBe(201);
  });
});

describe("strict filters", () => {
  test("unknown filter operators and keys on the documents query are a 400, not ignored", async () => {
    const [ne, neBody] = await query({ query: "x", filter: { ne: { document_type: "x" } } });
    const [loose, looseBody] = await query({ query: "x", filter: { document_type: "x" } });
    expect({ ne, neBody, loose, looseBody }).toEqual({
      ne: 400,
      neBody: apiError(
        "invalid_request",
        'filter.ne: is not a filter operator; the one supported is eq (e.g. {"eq": {"document_type": "note"}})',
      ),
      loose: 400,
      looseBody: apiError(
        "invalid_request",
        'filter.document_type: is not a filter operator; the one supported is eq (e.g. {"eq": {"document_type": "note"}})',
      ),
    });
  });

  test("at most 32 filter keys per request", async () => {
    const keys = (n: number, prefix = "k") =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, i]));
    const [eq32] = await query({ query: "x", filter: { eq: keys(32) } });
    const [eq33, eq33Body] = await query({ query: "x", filter: { eq: keys(33) } });
    const [split, splitBody] = await query({
      query: "x",
      filter: { eq: keys(20) },
      metadata: { filters: { metadata: keys(13, "m") } },
    });
    const [ctx, ctxBody] = await context({ query: "x", filters: keys(33) });
    const [long, longBody] = await context({ query: "x", filters: { k: "y".repeat(1025) } });
    // Context build's `filters` is also capped by its schema (shared with memory search); either way a 400 naming it.
    const ctxField = ctxBody.error.message.split(":")[0];
    expect({ eq32, eq33, eq33Body, split, splitBody, ctx, ctxField, long, longBody }).toEqual({
      eq32: 200,
      eq33: 400,
      eq33Body: apiError("invalid_request", "filter: has 33 filter keys; the limit is 32"),
      split: 400,
      splitBody: apiError("invalid_request", "filter: has 33 filter keys; the limit is 32"),
      ctx: 400,
      ctxField: "filters",
      long: 400,
      longBody: apiError("invalid_request", "filters.k: is 1025 characters; the limit is 1024"),
    });
  });
});

describe("context build", () => {
  test("answers an unknown or another user's workspace with 404, like the documents query", async () => {
    const bobs = await createWorkspace(server, "Bob's", mock("bob-ctx"));
    const [unknown, unknownBody] = await context({ query: "x", workspace_id: "ws_nope" });
    const [foreign, foreignBody] = await context({ query: "x", workspace_id: bobs });
    const [inFilters, inFiltersBody] = await context({ query: "x", filters: { workspaceId: "ws_nope" } });
    const [queryUnknown, queryUnknownBody] = await query({ query: "x", workspace_id: "ws_nope" });
    expect({
      unknown,
      unknownBody,
      foreign,
      foreignBody,
      inFilters,
      inFiltersBody,
      queryUnknown,
      queryUnknownBody,
    }).toEqual({
      unknown: 404,
      unknownBody: apiError("not_found", "workspace 'ws_nope' not found"),
      foreign: 404,
      foreignBody: apiError("not_found", `workspace '${bobs}' not found`),
      inFilters: 404,
      inFiltersBody: apiError("not_found", "workspace 'ws_nope' not found"),
      queryUnknown: 404,
      queryUnknownBody: apiError("not_found", "workspace 'ws_nope' not found"),
    });
  });
});

describe("reindex", () => {
  test("runs in batches of at most 200 documents per write transaction, and indexes them all", async () => {
    const ws = await createWorkspace(server, "Big reindex");
    const created = await Promise.all(
      Array.from({ length: 450 }, (_, i) =>
        server.call("POST", `/v1/workspaces/${ws}/notes`, {
          body: { documentPayload: { title: `Legacy ${i}` }, blocksPayload: [], markdown: `walrus ${i}` },
        }),
      ),
    );
    const store = server.services.store;
    const original = store.transaction;
    let transactions = 0;
    store.transaction = ((fn: any) => {
      transactions++;
      return original.call(store, fn);
    }) as typeof store.transaction;
    let answer: [number, any];
    try {
      answer = await server.call("POST", `/v1/workspaces/${ws}/reindex`);
    } finally {
      store.transaction = original;
    }
    expect({
      created: created.every(([status]) => status === 201),
      status: answer[0],
      message: answer[1].message,
      indexed: answer[1].indexStatus.documents,
      batched: transactions >= 3,
    }).toEqual({
      created: true,
      status: 200,
      message: `reindexed 450 document(s) of workspace ${ws}; removed 0 stale entries`,
      indexed: { stored: 450, indexed: 450, unindexed: 0, stale: 0, outdated: 0 },
      batched: true,
    });
  });
});

describe("reindex while the embedding model cannot answer", () => {
  let failing: TestServer;
  const fake = startFakeEmbedder();
  afterAll(async () => {
    await failing?.destroy();
    fake.stop();
  });

  test("never piles up jobs per source, and status reads ready with a note once the vector stage has failed", async () => {
    fake.failing = true;
    failing = await startTestServer({
      env: { EMBEDDINGS_PROVIDER: "openai", EMBEDDINGS_URL: fake.url, EMBEDDINGS_MODEL: "fake-64" },
    });
    const ws = await createWorkspace(failing, "No model");
    for (let i = 0; i < 3; i++)
      await createDocument(failing, ws, {
        title: `Doc ${i}`,
        indexable_blocks: [{ id: `b${i}`, content: `puffin ${i}` }],
      });
    const [, thread] = await failing.call("POST", `/v1/workspaces/${ws}/chats`, { body: { title: "T" } });
    for (const content of ["first", "second"])
      await failing.call("POST", `/v1/workspaces/${ws}/chats/${thread.id}/messages`, {
        body: { role: "user", content },
      });
    const pending: Array<{ text: number; vector: number }> = [];
    for (let i = 0; i < 7; i++) {
      const [, reindexed] = await failing.call("POST", `/v1/workspaces/${ws}/reindex`);
      pending.push(reindexed.indexStatus.pending);
    }
    // Let the vector stage try the queued rows (and fail) now rather than at its next retry.
    await failing.services.indexer.retryPostponed();
    await failing.services.indexer.drain();
    const [, status] = await failing.call("GET", `/v1/workspaces/${ws}/index/status`);
    const found = await queryIds(failing, { workspace_id: ws, query: "puffin" });
    expect({
      pending,
      status: status.status,
      note: status.note,
      statusPending: status.pending,
      found: found.length,
    }).toEqual({
      // Five sources (three documents, two messages): one job each, however often reindexed.
      pending: Array.from({ length: 7 }, () => ({ text: 0, vector: 5 })),
      status: "ready",
      note:
        "5 vector job(s) wait for an embedding model: the embedding model (openai:fake-64) cannot answer now; they are retried. " +
        "Full-text search covers this workspace meanwhile.",
      statusPending: { text: 0, vector: 5 },
      found: 3,
    });
  });
});

describe("a document write that asks for client-side encryption", () => {
  test("stores ciphertext, never the plaintext, and a malformed key stores nothing", async () => {
    const ws = await createWorkspace(server, "No silent plaintext");
    const key = "ab".repeat(32);
    for (const field of ["client_key", "clientKey"]) {
      const [status, body] = await server.call("POST", "/v1/documents", {
        body: { workspace_id: ws, title: "diary", markdown: "my bank pin is 0000", [field]: key },
      });
      expect(status).toBe(201);
      const [, read] = await server.call("GET", `/v1/workspaces/${ws}/documents/${body.document.id}`);
      expect(JSON.stringify(read)).not.toContain("bank pin");
      expect(read.markdown).toMatch(/^[0-9a-f]{24}:[0-9a-f]{32}:[0-9a-f]+$/);
    }
    const [status, body] = await server.call("POST", "/v1/documents", {
      body: { workspace_id: ws, title: "bad key", markdown: "x", client_key: "abc" },
    });
    expect([status, body.error.code, body.error.message]).toEqual([
      400,
      "invalid_request",
      expect.stringContaining("client_key"),
    ]);
    const [, listed] = await server.call("GET", `/v1/workspaces/${ws}/documents`);
    expect(JSON.stringify(listed)).not.toContain("bad key");
  });
});
