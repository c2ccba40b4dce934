import { afterAll, describe, expect, test } from "bun:test";
import { startFakeEmbedder } from "./helpers/fake-embedder";
import { startTestServer } from "./helpers/server";
import { apiError, createDocument, createWorkspace, queryIds } from "./helpers/workspaces";

const server = await startTestServer();
const fake = startFakeEmbedder();
const semantic = await startTestServer({
  env: { EMBEDDINGS_PROVIDER: "openai", EMBEDDINGS_URL: fake.url, EMBEDDINGS_MODEL: "fake" },
});
afterAll(async () => {
  await server.destroy();
  await semantic.destroy();
  fake.stop();
});
const query = (body: Record<string, unknown>, token?: string) =>
  server.call("POST", "/v1/documents/query", { body, token });

describe("POST /v1/documents/query", () => {
  test("answers items (= results), contextText, mode and query_strategy", async () => {
    const ws = await createWorkspace(server, "Query");
    // A title sharing no word with the query (titles are indexed too).
    const doc = await createDocument(server, ws, {
      title: "Night hunters",
      indexable_blocks: [{ id: "o1", content: "Barn owls hunt mice at night." }],
    });
    const [status, body] = await query({ workspace_id: ws, query: "owls mice", signals: ["text"] });
    const item = {
      type: "block",
      id: "o1",
      sourceId: doc.id,
      documentId: doc.id,
      threadId: null,
      workspaceId: ws,
      title: "Night hunters",
      score: expect.any(Number),
      snippet: "Barn owls hunt mice at night.",
      content: "Barn owls hunt mice at night.",
    };
    expect({ status, body }).toEqual({
      status: 200,
      body: {
        query: "owls mice",
        mode: "fulltext_fallback",
        strategy: "fulltext",
        signals: ["text"],
        query_strategy: "semantic_first_keyword_fallback",
        items: [item],
        results: [item],
        contextText: "## Relevant context\n- Barn owls hunt mice at night.",
      },
    });
    expect(body.items[0].score).toBeGreaterThan(0);
    expect(body.items[0].score).toBeLessThanOrEqual(1);
    // With every signal (the default), the word vectors also find the title, which shares no word, below the text match.
    const [, all] = await query({ workspace_id: ws, query: "owls mice" });
    expect({ signals: all.signals, contents: all.items.map((i: { content: string }) => i.content) }).toEqual({
      signals: ["text", "words"],
      contents: ["Barn owls hunt mice at night.", "Night hunters"],
    });
  });

  test("top_k defaults to 10, is honoured, and must be 1–100", async () => {
    const ws = await createWorkspace(server, "Many");
    await createDocument(server, ws, {
      title: "Many",
      indexable_blocks: Array.from({ length: 12 }, (_, i) => ({ id: `m${i}`, content: `lichen sample ${i}` })),
    });
    const byDefault = await queryIds(server, { workspace_id: ws, query: "lichen" });
    const three = await queryIds(server, { workspace_id: ws, query: "lichen", top_k: 3 });
    const [big, bigBody] = await query({ query: "x", top_k: 101 });
    const [zero] = await query({ query: "x", top_k: 0 });
    const [text, textBody] = await query({ query: "x", top_k: "5" });
    expect({ byDefault: byDefault.length, three: three.length, big, bigBody, zero, text, textBody }).toEqual({
      byDefault: 10,
      three: 3,
      big: 400,
      bigBody: apiError("invalid_request", "top_k: expected integer to be less or equal to 100"),
      zero: 400,
      text: 400,
      textBody: apiError("invalid_request", "top_k: expected integer"),
    });
  });

  test.each([
    ["no query", {}, "query: expected required property"],
    ["an empty query", { query: "" }, "query: expected string length greater or equal to 1"],
    ["include of the wrong type", { query: "x", include: { notes: "yes" } }, "include.notes: expected boolean"],
    [
      "a non-scalar filter value",
      { query: "x", filter: { eq: { document_type: 1 } } },
      "filter.eq.document_type: expected string",
    ],
  ])("400 for %s", async (_, body, message) => {
    const [status, error] = await query(body);
    expect({ status, error }).toEqual({ status: 400, error: apiError("invalid_request", message) });
  });

  test("404 for an unknown workspace, given as workspace_id, workspaceId or metadata.filters.workspaceId", async () => {
    const answers = await Promise.all([
      query({ query: "x", workspace_id: "ws_nope" }),
      query({ query: "x", workspaceId: "ws_nope" }),
      query({ query: "x", metadata: { filters: { workspaceId: "ws_nope" } } }),
    ]);
    const notFound = [404, apiError("not_found", "workspace 'ws_nope' not found")];
    expect(answers).toEqual([notFound, notFound, notFound] as any);
  });

  test("filter.eq.document_type and metadata filters narrow the results", async () => {
    const ws = await createWorkspace(server, "Filters");
    await createDocument(server, ws, {
      title: "Note",
      metadata: { project: "a" },
      indexable_blocks: [{ id: "n", content: "moss grows" }],
    });
    await createDocument(server, ws, {
      title: "Task",
      document_type: "task",
      metadata: { project: "b" },
      indexable_blocks: [{ id: "t", content: "moss removal" }],
    });
    const [, thread] = await server.call("POST", `/v1/workspaces/${ws}/chats`, { body: { title: "Chat" } });
    await server.call("POST", `/v1/workspaces/${ws}/chats/${thread.id}/messages`, {
      body: { role: "user", content: "moss everywhere" },
    });
    const sorted = async (body: Record<string, unknown>) =>
      (await queryIds(server, { workspace_id: ws, query: "moss", ...body })).sort();
    expect({
      all: await sorted({}),
      tasks: await sorted({ filter: { eq: { document_type: "task" } } }),
      chats: await sorted({ filter: { eq: { documentType: "chat" } } }),
      projectA: await sorted({ filter: { eq: { project: "a" } } }),
      projectB: await sorted({ metadata: { filters: { metadata: { project: "b" } } } }),
    }).toEqual({
      all: [expect.stringMatching(/^msg_/), "n", "t"],
      tasks: ["t"],
      chats: [expect.stringMatching(/^msg_/)],
      projectA: ["n"],
      projectB: ["t"],
    });
  });

  test("include picks blocks and messages (notes), memories and files", async () => {
    const ws = await createWorkspace(server, "Include");
    await createDocument(server, ws, { title: "Doc", indexable_blocks: [{ id: "blk-fern", content: "ferns unfurl" }] });
    const [, memory] = await server.call("POST", "/v1/memories", {
      body: { content: "I like ferns", workspaceId: ws },
    });
    const [, personal] = await server.call("POST", "/v1/memories", { body: { content: "ferns in my garden" } });
    const types = async (include: Record<string, boolean>) => {
      const [, body] = await query({ workspace_id: ws, query: "ferns", include });
      return body.items.map((item: any) => `${item.type}:${item.id}`).sort();
    };
    expect({
      notesOnly: await types({}),
      withMemories: await types({ memories: true }),
      memoriesOnly: await types({ notes: false, memories: true }),
      files: await types({ notes: false, files: true }),
      nothing: await types({ notes: false }),
    }).toEqual({
      notesOnly: ["block:blk-fern"],
      withMemories: ["block:blk-fern", `memory:${memory.id}`, `memory:${personal.id}`].sort(),
      memoriesOnly: [`memory:${memory.id}`, `memory:${personal.id}`].sort(),
      files: [],
      nothing: [],
    });
  });

  test("snippets are cut around the first query term", async () => {
    const ws = await createWorkspace(server, "Snippets");
    const content = `${"filler words ".repeat(40)}the pangolin curls up ${"more filler ".repeat(40)}`;
    await createDocument(server, ws, { title: "Long", indexable_blocks: [{ id: "long", content }] });
    const [, body] = await query({ workspace_id: ws, query: "pangolin" });
    const snippet: string = body.items[0].snippet;
    expect({
      starts: snippet.startsWith("…"),
      ends: snippet.endsWith("…"),
      has: snippet.includes("the pangolin curls up"),
      short: snippet.length <= 242,
    }).toEqual({
      starts: true,
      ends: true,
      has: true,
      short: true,
    });
  });
});

describe("POST /v1/context/build with include.notes", () => {
  test("returns the workspace's notes", async () => {
    const ws = await createWorkspace(server, "Context");
    const doc = await createDocument(server, ws, {
      title: "Ctx",
      indexable_blocks: [{ id: "ctx-1", content: "glaciers carve valleys" }],
    });
    const [status, body] = await server.call("POST", "/v1/context/build", {
      body: { query: "glaciers", workspace_id: ws, include: { memories: false, notes: true } },
    });
    expect({ status, body }).toEqual({
      status: 200,
      body: {
        query: "glaciers",
        mode: "fulltext_fallback",
        strategy: "fulltext",
        signals: ["text", "words"],
        items: [
          {
            type: "note",
            id: "ctx-1",
            score: expect.any(Number),
            content: "glaciers carve valleys",
            documentId: doc.id,
            workspaceId: ws,
          },
        ],
        contextText: "## Relevant context\n- glaciers carve valleys",
      },
    });
  });
});

describe("semantic first", () => {
  test("vectors find a block with no shared word (strategy vector); status counts its vectors", async () => {
    const ws = await createWorkspace(semantic, "Semantic");
    await createDocument(semantic, ws, {
      title: "Pets",
      indexable_blocks: [
        { id: "pet-1", content: "my dog sleeps all day" },
        { id: "pet-2", content: "tulips bloom" },
      ],
    });
    await semantic.services.indexer.drain();
    const [, body] = await semantic.call("POST", "/v1/documents/query", {
      body: { workspace_id: ws, query: "canine", top_k: 1 },
    });
    const [, both] = await semantic.call("POST", "/v1/documents/query", {
      body: { workspace_id: ws, query: "dog", top_k: 1 },
    });
    const [, status] = await semantic.call("GET", `/v1/workspaces/${ws}/index/status`);
    expect({
      mode: body.mode,
      strategy: body.strategy,
      ids: body.items.map((i: any) => i.id),
      bothStrategy: both.strategy,
      bothIds: both.items.map((i: any) => i.id),
      vectors: status.vectors,
      model: status.embeddingModel,
      dimension: status.vectorDimension,
    }).toEqual({
      // Vectors: two blocks and the title.
      mode: "semantic",
      strategy: "vector",
      ids: ["pet-1"],
      bothStrategy: "hybrid",
      bothIds: ["pet-1"],
      vectors: 3,
      model: "openai:fake",
      dimension: 64,
    });
  });
});
