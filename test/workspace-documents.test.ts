import { afterAll, describe, expect, test } from "bun:test";
import { startTestServer } from "./helpers/server";
import { apiError, createDocument, createWorkspace } from "./helpers/workspaces";

const server = await startTestServer();
afterAll(() => server.destroy());
const ws = await createWorkspace(server, "Scoped");
const base = `/v1/workspaces/${ws}/documents`;

const summary = (fields: Record<string, unknown>) => ({
  id: expect.any(String),
  workspaceId: ws,
  notebookId: null,
  title: expect.any(String),
  slug: expect.any(String),
  rootBlockId: expect.any(String),
  createdAt: expect.any(String),
  updatedAt: expect.any(String),
  _meta: {},
  ...fields,
});

async function slugOf(workspaceId: string, title: string): Promise<string> {
  const [, body] = await server.call("POST", `/v1/workspaces/${workspaceId}/documents`, { body: { title } });
  return body.document.slug;
}

describe("POST /v1/workspaces/:workspaceId/documents", () => {
  test("answers a summary that also carries workspace_id and markdown", async () => {
    const body = {
      title: "Scoped Doc",
      markdown: "# hi",
      metadata: { tag: "x" },
      notebookId: "nb-1",
      rootBlockId: "r1",
      workspace_id: "ws_ignored",
    };
    const [status, created] = await server.call("POST", base, { body });
    expect({ status, created }).toEqual({
      status: 201,
      created: {
        document: {
          ...summary({
            title: "Scoped Doc",
            slug: "scoped-doc",
            notebookId: "nb-1",
            rootBlockId: "r1",
            _meta: { tag: "x" },
          }),
          workspace_id: ws,
          markdown: "# hi",
        },
      },
    });
  });

  test("400 without a title, 404 for an unknown workspace", async () => {
    const [noTitle, noTitleBody] = await server.call("POST", base, { body: { markdown: "x" } });
    const [unknown, unknownBody] = await server.call("POST", "/v1/workspaces/ws_nope/documents", {
      body: { title: "x" },
    });
    expect({ noTitle, noTitleBody, unknown, unknownBody }).toEqual({
      noTitle: 400,
      noTitleBody: apiError("invalid_request", "title: expected required property"),
      unknown: 404,
      unknownBody: apiError("not_found", "workspace 'ws_nope' not found"),
    });
  });
});

describe("GET /v1/workspaces/:workspaceId/documents", () => {
  test("lists summaries oldest first, optionally of one notebook", async () => {
    const space = await createWorkspace(server, "Listing");
    const a = await createDocument(server, space, { title: "A", notebook_id: "nb-a" });
    const b = await createDocument(server, space, { title: "B", metadata: { k: 1 } });
    const [status, listed] = await server.call("GET", `/v1/workspaces/${space}/documents`);
    const [, filtered] = await server.call("GET", `/v1/workspaces/${space}/documents?notebookId=nb-a`);
    const summaryOf = (d: any) => ({
      id: d.id,
      workspaceId: space,
      notebookId: d.notebook_id,
      title: d.title,
      slug: d.slug,
      rootBlockId: d.root_block_id,
      createdAt: d.created_at,
      updatedAt: d.updated_at,
      _meta: d.metadata,
    });
    expect({ status, listed, filtered }).toEqual({
      status: 200,
      listed: { documents: [summaryOf(a), summaryOf(b)], nextCursor: null, hasMore: false },
      filtered: { documents: [summaryOf(a)], nextCursor: null, hasMore: false },
    });
  });

  test("404 for an unknown workspace", async () => {
    const [status, body] = await server.call("GET", "/v1/workspaces/ws_nope/documents");
    expect({ status, body }).toEqual({ status: 404, body: apiError("not_found", "workspace 'ws_nope' not found") });
  });
});

describe("GET/PUT/DELETE /v1/workspaces/:workspaceId/documents/:documentId", () => {
  test("GET answers the full record with its blocks and markdown (a valid clientKey decrypts nothing here)", async () => {
    const doc = await createDocument(server, ws, { title: "Read me", blocks_payload: [{ id: "b" }], markdown: "body" });
    const [status, body] = await server.call("GET", `${base}/${doc.id}?clientKey=${"ab".repeat(32)}`);
    expect({ status, body }).toEqual({ status: 200, body: { document: doc, blocks: [{ id: "b" }], markdown: "body" } });
  });

  test("GET answers markdown '' when there is none", async () => {
    const doc = await createDocument(server, ws, { title: "No markdown" });
    const [, body] = await server.call("GET", `${base}/${doc.id}`);
    expect(body).toEqual({ document: doc, blocks: [], markdown: "" });
  });

  test("PUT patches like PATCH and answers a summary", async () => {
    const doc = await createDocument(server, ws, { title: "Put me", markdown: "keep", metadata: { a: 1, b: 2 } });
    const [status, body] = await server.call("PUT", `${base}/${doc.id}`, {
      body: { title: "Put Me Renamed", metadata_patch: { b: null, c: 3 } },
    });
    const [, read] = await server.call("GET", `${base}/${doc.id}`);
    expect({ status, body, markdown: read.markdown }).toEqual({
      status: 200,
      body: {
        document: summary({
          id: doc.id,
          title: "Put Me Renamed",
          slug: "put-me-renamed",
          rootBlockId: doc.root_block_id,
          createdAt: doc.created_at,
          _meta: { a: 1, c: 3 },
        }),
      },
      markdown: "keep",
    });
  });

  test("DELETE answers {deleted: true}; a second DELETE and GET 404", async () => {
    const doc = await createDocument(server, ws, { title: "Delete me" });
    const [status, body] = await server.call("DELETE", `${base}/${doc.id}`);
    const [again, againBody] = await server.call("DELETE", `${base}/${doc.id}`);
    const [read, readBody] = await server.call("GET", `${base}/${doc.id}`);
    const missing = apiError("not_found", `document '${doc.id}' not found`);
    expect({ status, body, again, againBody, read, readBody }).toEqual({
      status: 200,
      body: { deleted: true },
      again: 404,
      againBody: missing,
      read: 404,
      readBody: missing,
    });
  });

  test("a document is only found in its own workspace", async () => {
    const doc = await createDocument(server, ws, { title: "Home" });
    const other = await createWorkspace(server, "Elsewhere");
    const [get] = await server.call("GET", `/v1/workspaces/${other}/documents/${doc.id}`);
    const [put] = await server.call("PUT", `/v1/workspaces/${other}/documents/${doc.id}`, { body: { title: "x" } });
    const [del] = await server.call("DELETE", `/v1/workspaces/${other}/documents/${doc.id}`);
    expect({ get, put, del }).toEqual({ get: 404, put: 404, del: 404 });
  });

  test("PUT validates types", async () => {
    const [status, body] = await server.call("PUT", `${base}/any`, { body: { title: 7 } });
    expect({ status, body }).toEqual({ status: 400, body: apiError("invalid_request", "title: expected string") });
  });
});

describe("slugs", () => {
  test("are lowercase, ASCII-folded and hyphenated", async () => {
    const space = await createWorkspace(server, "Slugs");
    const slugs = [
      await slugOf(space, "Crème Brûlée: Ünïcode & more!"),
      await slugOf(space, "Straße  Œuvre — Ærø"),
      await slugOf(space, "  --Hello__World--  "),
      await slugOf(space, "!!!"),
      await slugOf(space, "日本語"),
      await slugOf(space, "x".repeat(100)),
    ];
    expect(slugs).toEqual([
      "creme-brulee-unicode-more",
      "strasse-oeuvre-aero",
      "hello-world",
      "untitled",
      "untitled-2",
      "x".repeat(80),
    ]);
  });

  test("are unique within a workspace by suffix, not across workspaces", async () => {
    const one = await createWorkspace(server, "One");
    const two = await createWorkspace(server, "Two");
    const slugs = [
      await slugOf(one, "Plan"),
      await slugOf(one, "plan"),
      await slugOf(one, "PLAN!"),
      await slugOf(two, "Plan"),
    ];
    expect(slugs).toEqual(["plan", "plan-2", "plan-3", "plan"]);
  });

  test("follow renames, keep their suffix when the title is unchanged, and are freed by delete", async () => {
    const space = await createWorkspace(server, "Renames");
    const first = await createDocument(server, space, { title: "Draft" });
    const second = await createDocument(server, space, { title: "Draft" });
    const rename = async (id: string, title: string) =>
      (await server.call("PATCH", `/v1/documents/${id}`, { body: { workspace_id: space, title } }))[1].document.slug;
    const same = await rename(second.id, "Draft");
    const renamed = await rename(second.id, "Final");
    const clash = await rename(first.id, "Final");
    await server.call("DELETE", `/v1/documents/${second.id}?workspace_id=${space}`);
    const reused = (await createDocument(server, space, { title: "Final" })).slug;
    expect({ second: second.slug, same, renamed, clash, reused }).toEqual({
      second: "draft-2",
      same: "draft-2",
      renamed: "final",
      clash: "final-2",
      reused: "final",
    });
  });
});

describe("metadata_patch", () => {
  test("merges keys and removes those set to null", async () => {
    const doc = await createDocument(server, ws, { title: "Meta", metadata: { keep: 1, drop: 2, nested: { a: 1 } } });
    const [, first] = await server.call("PATCH", `/v1/documents/${doc.id}`, {
      body: { workspace_id: ws, metadata_patch: { drop: null, added: "yes", nested: { b: 2 }, absent: null } },
    });
    const [, second] = await server.call("PATCH", `/v1/documents/${doc.id}`, {
      body: { workspace_id: ws, metadata_patch: {} },
    });
    expect({ first: first.document.metadata, second: second.document.metadata }).toEqual({
      first: { keep: 1, nested: { b: 2 }, added: "yes" },
      second: { keep: 1, nested: { b: 2 }, added: "yes" },
    });
  });

  test("applies on top of a metadata replacement sent in the same patch", async () => {
    const doc = await createDocument(server, ws, { title: "Meta replace", metadata: { old: true } });
    const [, patched] = await server.call("PATCH", `/v1/documents/${doc.id}`, {
      body: { workspace_id: ws, metadata: { fresh: 1, gone: 2 }, metadata_patch: { gone: null } },
    });
    expect(patched.document.metadata).toEqual({ fresh: 1 });
  });
});
