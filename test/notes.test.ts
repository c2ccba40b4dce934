import { afterAll, describe, expect, test } from "bun:test";
import { startTestServer } from "./helpers/server";
import { apiError, createDocument, createWorkspace, queryIds } from "./helpers/workspaces";

const server = await startTestServer();
afterAll(() => server.destroy());
const ws = await createWorkspace(server, "Legacy");
const notes = `/v1/workspaces/${ws}/notes`;
const ENVELOPE = { format: "svc.om.encrypted", ciphertext: "aa11:bb22:cc33" };

async function saveNote(body: Record<string, unknown>, workspaceId = ws): Promise<string> {
  const [status, saved] = await server.call("POST", `/v1/workspaces/${workspaceId}/notes`, {
    body: { documentPayload: {}, blocksPayload: [], ...body },
  });
  if (status !== 201) throw new Error(`note save failed: ${status} ${JSON.stringify(saved)}`);
  return saved.id;
}

describe("POST /v1/workspaces/:workspaceId/notes", () => {
  test("creates a note (201), rewrites it when documentId names it again (200)", async () => {
    const [created, createdBody] = await server.call("POST", notes, {
      body: { documentPayload: ENVELOPE, blocksPayload: "01:02:03", documentId: "legacy-1" },
    });
    const [replaced, replacedBody] = await server.call("POST", notes, {
      body: { documentPayload: { title: "Now plain" }, blocksPayload: [], documentId: "legacy-1" },
    });
    const [, read] = await server.call("GET", `${notes}/legacy-1`);
    expect({ created, createdBody, replaced, replacedBody, read }).toEqual({
      created: 201,
      createdBody: { success: true, id: "legacy-1" },
      replaced: 200,
      replacedBody: { success: true, id: "legacy-1" },
      read: { document: { title: "Now plain" }, blocks: [], markdown: "" },
    });
  });

  test("generates an id when documentId is absent", async () => {
    const [status, body] = await server.call("POST", notes, { body: { documentPayload: {}, blocksPayload: [] } });
    expect({ status, body }).toEqual({ status: 201, body: { success: true, id: expect.stringMatching(/^doc_/) } });
  });

  test.each([
    ["no documentPayload", { blocksPayload: [] }, "documentPayload: expected required property"],
    ["no blocksPayload", { documentPayload: {} }, "blocksPayload: expected required property"],
    ["markdown not a string", { documentPayload: {}, blocksPayload: [], markdown: 1 }, "markdown: expected string"],
    [
      "notebookId empty",
      { documentPayload: {}, blocksPayload: [], notebookId: "" },
      "notebookId: expected string length greater or equal to 1",
    ],
  ])("400 when %s", async (_, body, message) => {
    const [status, error] = await server.call("POST", notes, { body });
    expect({ status, error }).toEqual({ status: 400, error: apiError("invalid_request", message) });
  });

  test("413 for an oversized payload, naming the legacy field", async () => {
    const size = 5 * 1024 * 1024 + 1;
    const [status, error] = await server.call("POST", notes, {
      body: { documentPayload: "x".repeat(size), blocksPayload: [] },
    });
    expect({ status, error }).toEqual({
      status: 413,
      error: apiError("payload_too_large", `documentPayload: is ${size} bytes; the limit is 5242880 bytes (5 MB)`),
    });
  });

  test("409 when documentId belongs to a document of another workspace", async () => {
    const other = await createWorkspace(server, "Other");
    await saveNote({ documentId: "taken-elsewhere" }, other);
    const [status, error] = await server.call("POST", notes, {
      body: { documentPayload: {}, blocksPayload: [], documentId: "taken-elsewhere" },
    });
    expect({ status, error }).toEqual({
      status: 409,
      error: apiError("conflict", "id: a document with id 'taken-elsewhere' already exists"),
    });
  });
});

describe("GET /v1/workspaces/:workspaceId/notes", () => {
  test("is a raw array: encrypted notes as format + ciphertext, plaintext as document, _meta from the sidecar", async () => {
    const space = await createWorkspace(server, "List");
    const blocks = [{ id: "b1", type: "p", content: "sidecar text" }];
    const a = await saveNote({ documentPayload: ENVELOPE, indexableBlocks: blocks, notebookId: "nb-1" }, space);
    const b = await saveNote({ documentPayload: "ff00:ee11:dd22" }, space);
    const c = await saveNote({ documentPayload: JSON.stringify(ENVELOPE) }, space);
    const d = await saveNote({ documentPayload: { title: "Plain" } }, space);
    const e = (await createDocument(server, space, { title: "Unified", metadata: { mood: "calm" } })).id;
    const [status, list] = await server.call("GET", `/v1/workspaces/${space}/notes`);
    const meta = (fields: Record<string, unknown> = {}) => ({
      indexableBlocks: [],
      notebookId: null,
      updatedAt: expect.any(String),
      ...fields,
    });
    expect({ status, list }).toEqual({
      status: 200,
      list: [
        { id: a, ...ENVELOPE, _meta: meta({ indexableBlocks: blocks, notebookId: "nb-1" }) },
        { id: b, format: "svc.om.encrypted", ciphertext: "ff00:ee11:dd22", _meta: meta() },
        { id: c, ...ENVELOPE, _meta: meta() },
        { id: d, format: "json", ciphertext: null, document: { title: "Plain" }, _meta: meta() },
        { id: e, format: "json", ciphertext: null, document: {}, _meta: meta({ mood: "calm" }) },
      ],
    });
  });

  test("404 for an unknown workspace", async () => {
    const [status, body] = await server.call("GET", "/v1/workspaces/ws_nope/notes");
    expect({ status, body }).toEqual({ status: 404, body: apiError("not_found", "workspace 'ws_nope' not found") });
  });
});

describe("GET/PATCH/DELETE /v1/workspaces/:workspaceId/notes/:noteId", () => {
  test("PATCH rewrites only the parts present", async () => {
    const id = await saveNote({
      documentPayload: { title: "Patchable" },
      blocksPayload: [{ id: 1 }],
      markdown: "md",
      notebookId: "nb",
    });
    const [s1, b1] = await server.call("PATCH", `${notes}/${id}`, { body: { markdown: "new md" } });
    const [, afterMarkdown] = await server.call("GET", `${notes}/${id}`);
    const [s2] = await server.call("PATCH", `${notes}/${id}`, {
      body: { documentPayload: { title: "Renamed" }, notebookId: null },
    });
    const [, unified] = await server.call("GET", `/v1/workspaces/${ws}/documents/${id}`);
    expect({
      s1,
      b1,
      afterMarkdown,
      s2,
      title: unified.document.title,
      slug: unified.document.slug,
      notebook: unified.document.notebook_id,
    }).toEqual({
      s1: 200,
      b1: { success: true, id },
      afterMarkdown: { document: { title: "Patchable" }, blocks: [{ id: 1 }], markdown: "new md" },
      s2: 200,
      title: "Renamed",
      slug: "renamed",
      notebook: null,
    });
  });

  test("DELETE answers {success: true}; the note is then gone", async () => {
    const id = await saveNote({});
    const [status, body] = await server.call("DELETE", `${notes}/${id}`);
    const [get, getBody] = await server.call("GET", `${notes}/${id}`);
    const [again] = await server.call("DELETE", `${notes}/${id}`);
    const [patch] = await server.call("PATCH", `${notes}/${id}`, { body: { markdown: "x" } });
    expect({ status, body, get, getBody, again, patch }).toEqual({
      status: 200,
      body: { success: true },
      get: 404,
      getBody: apiError("not_found", `document '${id}' not found`),
      again: 404,
      patch: 404,
    });
  });

  test("PATCH validates types", async () => {
    const id = await saveNote({});
    const [status, body] = await server.call("PATCH", `${notes}/${id}`, {
      body: { indexableBlocks: [{ content: "x" }] },
    });
    expect({ status, body }).toEqual({
      status: 400,
      body: apiError("invalid_request", "indexableBlocks.0.id: expected required property"),
    });
  });
});

describe("one store, two views", () => {
  test("a legacy note reads as a unified document, and a unified document as a note", async () => {
    const noteId = await saveNote({
      documentPayload: { title: "From Legacy" },
      blocksPayload: [{ id: "x" }],
      markdown: "legacy md",
      notebookId: "nb-7",
    });
    const [, asDocument] = await server.call("GET", `/v1/workspaces/${ws}/documents/${noteId}`);
    const unified = await createDocument(server, ws, {
      title: "From Unified",
      document_payload: ENVELOPE,
      blocks_payload: [],
      markdown: "u",
    });
    const [, asNote] = await server.call("GET", `${notes}/${unified.id}`);
    expect({ asDocument, asNote }).toEqual({
      asDocument: {
        document: {
          id: noteId,
          project_id: ws,
          workspace_id: ws,
          document_type: "note",
          title: "From Legacy",
          slug: "from-legacy",
          root_block_id: expect.stringMatching(/^blk_/),
          notebook_id: "nb-7",
          document_payload: { title: "From Legacy" },
          blocks_payload: [{ id: "x" }],
          markdown: "legacy md",
          metadata: {},
          created_at: expect.any(String),
          updated_at: expect.any(String),
        },
        blocks: [{ id: "x" }],
        markdown: "legacy md",
      },
      asNote: { document: ENVELOPE, blocks: [], markdown: "u" },
    });
  });

  test("legacy writes do not reach the search index", async () => {
    const space = await createWorkspace(server, "Unindexed");
    await saveNote({ indexableBlocks: [{ id: "lb", content: "narwhals" }] }, space);
    expect(await queryIds(server, { workspace_id: space, query: "narwhals" })).toEqual([]);
  });
});

describe("notebooks", () => {
  test("the registry is null until saved, then the saved ciphertext", async () => {
    const space = await createWorkspace(server, "Notebooks");
    const [s0, before] = await server.call("GET", `/v1/workspaces/${space}/notebooks`);
    const [s1, saved] = await server.call("POST", `/v1/workspaces/${space}/notebooks`, {
      body: { ciphertext: "01:02:03" },
    });
    const [, after] = await server.call("GET", `/v1/workspaces/${space}/notebooks`);
    const [s2, one] = await server.call("GET", `/v1/workspaces/${space}/notebooks/nb-1`);
    expect({ s0, before, s1, saved, after, s2, one }).toEqual({
      s0: 200,
      before: { ciphertext: null },
      s1: 200,
      saved: { success: true },
      after: { ciphertext: "01:02:03" },
      s2: 404,
      one: apiError("not_found", "notebook 'nb-1' not found"),
    });
  });

  test("a plaintext JSON registry yields structured notebook records", async () => {
    const space = await createWorkspace(server, "Structured");
    const registry = {
      notebooks: [
        { id: "nb-1", name: "Birds" },
        { id: "nb-2", name: "Trees" },
      ],
    };
    await server.call("POST", `/v1/workspaces/${space}/notebooks`, { body: { ciphertext: JSON.stringify(registry) } });
    const [status, body] = await server.call("GET", `/v1/workspaces/${space}/notebooks/nb-2`);
    const [missing] = await server.call("GET", `/v1/workspaces/${space}/notebooks/nb-3`);
    expect({ status, body, missing }).toEqual({
      status: 200,
      body: { notebook: { id: "nb-2", name: "Trees" } },
      missing: 404,
    });
  });

  test("POST validates and limits the ciphertext", async () => {
    const [missing, missingBody] = await server.call("POST", `/v1/workspaces/${ws}/notebooks`, { body: {} });
    const [wrong, wrongBody] = await server.call("POST", `/v1/workspaces/${ws}/notebooks`, { body: { ciphertext: 5 } });
    const size = 5 * 1024 * 1024 + 1;
    const [big, bigBody] = await server.call("POST", `/v1/workspaces/${ws}/notebooks`, {
      body: { ciphertext: "c".repeat(size) },
    });
    expect({ missing, missingBody, wrong, wrongBody, big, bigBody }).toEqual({
      missing: 400,
      missingBody: apiError("invalid_request", "ciphertext: expected required property"),
      wrong: 400,
      wrongBody: apiError("invalid_request", "ciphertext: expected string"),
      big: 413,
      bigBody: apiError("payload_too_large", `ciphertext: is ${size} bytes; the limit is 5242880 bytes (5 MB)`),
    });
  });
});
