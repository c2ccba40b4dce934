import { afterAll, describe, expect, test } from "bun:test";
import { startTestServer } from "./helpers/server";
import { apiError, createDocument, createWorkspace, queryIds } from "./helpers/workspaces";

const server = await startTestServer();
afterAll(() => server.destroy());
const ws = await createWorkspace(server, "Docs");
const MB5 = 5 * 1024 * 1024;
const ENVELOPE = { format: "svc.om.encrypted", ciphertext: "0a1b:2c3d:4e5f" };

/** A full record with every varying field matched loosely. */
const full = (fields: Record<string, unknown>) => ({
  id: expect.any(String),
  project_id: ws,
  workspace_id: ws,
  document_type: "note",
  slug: expect.any(String),
  root_block_id: expect.stringMatching(/^blk_/),
  notebook_id: null,
  document_payload: {},
  blocks_payload: [],
  markdown: "",
  metadata: {},
  created_at: expect.any(String),
  updated_at: expect.any(String),
  ...fields,
});

describe("POST /v1/documents", () => {
  test("creates a full record from snake_case fields", async () => {
    const body = {
      workspace_id: ws,
      title: "Field Notes",
      id: "doc-custom-1",
      root_block_id: "root-1",
      document_type: "journal",
      document_payload: { title: "Field Notes", version: 2 },
      blocks_payload: [{ id: "b1" }],
      markdown: "# Field Notes",
      metadata: { topic: "birds" },
      indexable_blocks: [{ id: "b1", type: "paragraph", content: "owls" }],
      notebook_id: "nb-1",
    };
    const [status, created] = await server.call("POST", "/v1/documents", { body });
    expect({ status, created }).toEqual({
      status: 201,
      created: {
        document: full({
          id: "doc-custom-1",
          document_type: "journal",
          title: "Field Notes",
          slug: "field-notes",
          root_block_id: "root-1",
          notebook_id: "nb-1",
          document_payload: { title: "Field Notes", version: 2 },
          blocks_payload: [{ id: "b1" }],
          markdown: "# Field Notes",
          metadata: { topic: "birds" },
        }),
      },
    });
    expect(created.document.created_at).toBe(created.document.updated_at);
  });

  test("accepts every camelCase alias", async () => {
    const body = {
      workspaceId: ws,
      title: "Camel",
      rootBlockId: "root-c",
      documentType: "task",
      documentPayload: { a: 1 },
      blocksPayload: [{ id: "c1" }],
      _meta: { kind: "camel" },
      indexableBlocks: [{ id: "c1", type: "p", content: "camels" }],
      notebookId: "nb-c",
    };
    const [status, created] = await server.call("POST", "/v1/documents", { body });
    expect({ status, created }).toEqual({
      status: 201,
      created: {
        document: full({
          title: "Camel",
          slug: "camel",
          root_block_id: "root-c",
          document_type: "task",
          document_payload: { a: 1 },
          blocks_payload: [{ id: "c1" }],
          metadata: { kind: "camel" },
          notebook_id: "nb-c",
        }),
      },
    });
    // The title is indexed too, under the root block id.
    expect(await queryIds(server, { workspace_id: ws, query: "camels" })).toEqual(["c1", "root-c"]);
  });

  test("fills defaults: note type, generated doc_ id and root block, empty payloads", async () => {
    const document = await createDocument(server, ws, { title: "Bare" });
    expect(document).toEqual(full({ id: expect.stringMatching(/^doc_[0-9A-Z]{26}$/), title: "Bare", slug: "bare" }));
  });

  test("stores encrypted envelopes and iv:tag:ct strings unchanged", async () => {
    const document = await createDocument(server, ws, {
      title: "Secret",
      document_payload: ENVELOPE,
      blocks_payload: "00ff:11ee:22dd",
      markdown: "aa:bb:cc",
    });
    expect(document).toEqual(
      full({
        title: "Secret",
        slug: "secret",
        document_payload: ENVELOPE,
        blocks_payload: "00ff:11ee:22dd",
        markdown: "aa:bb:cc",
      }),
    );
  });

  test("refuses an id that already exists", async () => {
    await createDocument(server, ws, { title: "One", id: "dup-id" });
    const [status, body] = await server.call("POST", "/v1/documents", {
      body: { workspace_id: ws, title: "Two", id: "dup-id" },
    });
    expect({ status, body }).toEqual({
      status: 409,
      body: apiError("conflict", "id: a document with id 'dup-id' already exists"),
    });
  });

  test.each([
    ["no workspace", { title: "x" }, "workspace_id: is required (or workspaceId)"],
    ["no title", { workspace_id: "ws_x" }, "title: expected required property"],
    ["title not a string", { workspace_id: "ws_x", title: 5 }, "title: expected string"],
    ["empty title", { workspace_id: "ws_x", title: "" }, "title: expected string length greater or equal to 1"],
    ["blank title", { workspace_id: "ws_x", title: " \t " }, "title: must not be blank"],
    [
      "payload a number",
      { workspace_id: "ws_x", title: "x", document_payload: 42 },
      "document_payload: property 'document_payload' should be one of: 'object', 'string'",
    ],
    ["markdown an object", { workspace_id: "ws_x", title: "x", markdown: {} }, "markdown: expected string"],
    ["metadata a string", { workspace_id: "ws_x", title: "x", metadata: "x" }, "metadata: expected object"],
    [
      "block without content",
      { workspace_id: "ws_x", title: "x", indexable_blocks: [{ id: "b" }] },
      "indexable_blocks.0.content: expected required property",
    ],
    [
      "blocks not an array",
      { workspace_id: "ws_x", title: "x", indexableBlocks: {} },
      "indexableBlocks: expected array",
    ],
    [
      "bad custom id",
      { workspace_id: "ws_x", title: "x", id: "no spaces" },
      "id: expected string to match '^[A-Za-z0-9][A-Za-z0-9_.:-]*$'",
    ],
  ])("400 when %s", async (_, body, message) => {
    const [status, error] = await server.call("POST", "/v1/documents", { body });
    expect({ status, error }).toEqual({ status: 400, error: apiError("invalid_request", message) });
  });

  test("400 on duplicate indexable block ids", async () => {
    const body = {
      workspace_id: ws,
      title: "x",
      indexable_blocks: [
        { id: "b", content: "1" },
        { id: "b", content: "2" },
      ],
    };
    const [status, error] = await server.call("POST", "/v1/documents", { body });
    expect({ status, error }).toEqual({
      status: 400,
      error: apiError("invalid_request", "indexable_blocks.1.id: duplicate block id 'b'"),
    });
  });

  test("404 for an unknown workspace", async () => {
    const [status, error] = await server.call("POST", "/v1/documents", {
      body: { workspace_id: "ws_nope", title: "x" },
    });
    expect({ status, error }).toEqual({ status: 404, error: apiError("not_found", "workspace 'ws_nope' not found") });
  });
});

describe("size limits", () => {
  test("accepts exactly 5 MB of markdown", async () => {
    const document = await createDocument(server, ws, { title: "Big", markdown: "m".repeat(MB5) });
    expect(document.markdown.length).toBe(MB5);
  });

  test.each([
    [
      "document_payload",
      { document_payload: "p".repeat(MB5 + 1) },
      `document_payload: is ${MB5 + 1} bytes; the limit is ${MB5} bytes (5 MB)`,
    ],
    [
      "markdown",
      { markdown: "é".repeat(MB5 / 2 + 1) },
      `markdown: is ${MB5 + 2} bytes; the limit is ${MB5} bytes (5 MB)`,
    ],
    [
      "blocks_payload",
      { blocks_payload: Array.from({ length: 10_001 }, () => ({})) },
      "blocks_payload: has 10001 blocks; the limit is 10000",
    ],
    [
      "indexable_blocks",
      { indexable_blocks: Array.from({ length: 10_001 }, (_, i) => ({ id: `b${i}`, content: "x" })) },
      "indexable_blocks: has 10001 blocks; the limit is 10000",
    ],
    ["metadata", { metadata: { big: "x".repeat(70_000) } }, "metadata: is 70010 bytes; the limit is 65536 bytes"],
  ])("413 when %s is too large, on create and on patch", async (_, fields, message) => {
    const [status, error] = await server.call("POST", "/v1/documents", {
      body: { workspace_id: ws, title: "Too big", ...fields },
    });
    const doc = await createDocument(server, ws, { title: "Patched later" });
    const [patchStatus, patchError] = await server.call("PATCH", `/v1/documents/${doc.id}`, {
      body: { workspace_id: ws, ...fields },
    });
    const expected = apiError("payload_too_large", message);
    expect({ status, error, patchStatus, patchError }).toEqual({
      status: 413,
      error: expected,
      patchStatus: 413,
      patchError: expected,
    });
  });
});

describe("PATCH /v1/documents/:id", () => {
  test("rewrites only the fields sent", async () => {
    const doc = await createDocument(server, ws, {
      title: "Keep",
      markdown: "old",
      document_payload: { v: 1 },
      metadata: { a: 1 },
      notebook_id: "nb",
    });
    const [status, body] = await server.call("PATCH", `/v1/documents/${doc.id}`, {
      body: { workspaceId: ws, markdown: "new" },
    });
    expect({ status, body }).toEqual({
      status: 200,
      body: { document: { ...doc, markdown: "new", updated_at: expect.any(String) } },
    });
    expect(body.document.updated_at >= doc.updated_at).toBe(true);
  });

  test("accepts the patch aliases and detaches a notebook with null", async () => {
    const doc = await createDocument(server, ws, { title: "Aliased", notebook_id: "nb" });
    const body = {
      workspace_id: ws,
      rootBlockId: "r2",
      documentPayload: ENVELOPE,
      blocksPayload: [{ id: 1 }],
      documentType: "task",
      notebookId: null,
      indexableBlocks: [{ id: "z", content: "zebras" }],
    };
    const [status, patched] = await server.call("PATCH", `/v1/documents/${doc.id}`, { body });
    expect({ status, patched }).toEqual({
      status: 200,
      patched: {
        document: {
          ...doc,
          root_block_id: "r2",
          document_payload: ENVELOPE,
          blocks_payload: [{ id: 1 }],
          document_type: "task",
          notebook_id: null,
          updated_at: expect.any(String),
        },
      },
    });
  });

  test("400 without workspace_id, 404 for an unknown document or the wrong workspace", async () => {
    const doc = await createDocument(server, ws, { title: "Somewhere" });
    const other = await createWorkspace(server, "Other");
    const [noWs, noWsBody] = await server.call("PATCH", `/v1/documents/${doc.id}`, { body: { title: "x" } });
    const [unknown, unknownBody] = await server.call("PATCH", "/v1/documents/doc_nope", {
      body: { workspace_id: ws, title: "x" },
    });
    const [elsewhere, elsewhereBody] = await server.call("PATCH", `/v1/documents/${doc.id}`, {
      body: { workspace_id: other, title: "x" },
    });
    expect({ noWs, noWsBody, unknown, unknownBody, elsewhere, elsewhereBody }).toEqual({
      noWs: 400,
      noWsBody: apiError("invalid_request", "workspace_id: is required (or workspaceId)"),
      unknown: 404,
      unknownBody: apiError("not_found", "document 'doc_nope' not found"),
      elsewhere: 404,
      elsewhereBody: apiError("not_found", `document '${doc.id}' not found`),
    });
  });

  test("400 on a wrong type", async () => {
    const [status, error] = await server.call("PATCH", "/v1/documents/any", {
      body: { workspace_id: ws, metadata_patch: [] },
    });
    expect({ status, error }).toEqual({
      status: 400,
      error: apiError("invalid_request", "metadata_patch: expected object"),
    });
  });
});

describe("DELETE /v1/documents/:id", () => {
  test("deletes with ?workspace_id= or ?workspaceId=, then 404s", async () => {
    const a = await createDocument(server, ws, { title: "Gone A" });
    const b = await createDocument(server, ws, { title: "Gone B" });
    const [sa, ba] = await server.call("DELETE", `/v1/documents/${a.id}?workspace_id=${ws}`);
    const [sb, bb] = await server.call("DELETE", `/v1/documents/${b.id}?workspaceId=${ws}`);
    const [again, againBody] = await server.call("DELETE", `/v1/documents/${a.id}?workspace_id=${ws}`);
    const [read] = await server.call("GET", `/v1/workspaces/${ws}/documents/${a.id}`);
    expect({ sa, ba, sb, bb, again, againBody, read }).toEqual({
      sa: 200,
      ba: { id: a.id, deleted: true },
      sb: 200,
      bb: { id: b.id, deleted: true },
      again: 404,
      againBody: apiError("not_found", `document '${a.id}' not found`),
      read: 404,
    });
  });

  test("400 without a workspace id", async () => {
    const [status, error] = await server.call("DELETE", "/v1/documents/whatever");
    expect({ status, error }).toEqual({
      status: 400,
      error: apiError("invalid_request", "workspace_id: is required (or workspaceId)"),
    });
  });
});

describe("derived-index synchronization", () => {
  test("search sees a new document's blocks, an edited block's new text, and nothing once deleted", async () => {
    const space = await createWorkspace(server, "Sync");
    const doc = await createDocument(server, space, {
      title: "Sync",
      indexable_blocks: [{ id: "s1", content: "kestrels hover over fields" }],
    });
    const created = await queryIds(server, { workspace_id: space, query: "kestrels" });
    await server.call("PATCH", `/v1/documents/${doc.id}`, {
      body: { workspace_id: space, indexable_blocks: [{ id: "s1", content: "falcons dive fast" }] },
    });
    const oldText = await queryIds(server, { workspace_id: space, query: "kestrels" });
    const newText = await queryIds(server, { workspace_id: space, query: "falcons" });
    await server.call("DELETE", `/v1/documents/${doc.id}?workspace_id=${space}`);
    const deleted = await queryIds(server, { workspace_id: space, query: "falcons" });
    expect({ created, oldText, newText, deleted }).toEqual({
      created: ["s1"],
      oldText: [],
      newText: ["s1"],
      deleted: [],
    });
  });
});
