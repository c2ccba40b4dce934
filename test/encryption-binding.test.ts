import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { decryptString, encryptString, isCiphertextString, sealJson } from "../src/crypto/aes-gcm";
import type { SealBinding } from "../src/crypto/binding";
import { run, sql } from "../src/db/store";
import { startTestServer, type TestServer } from "./helpers/server";
import { createWorkspace } from "./helpers/workspaces";

/**
 * Issue 22, finding 6: what the server seals is bound to its owner, record and field. A
 * sealed value pasted into another document, field, message or user's record does not open
 * there (left as stored, counted in X-Svc-Decrypt-Errors); values sealed before binding
 * (untagged `iv:tag:ct`) still open wherever they are.
 */
const KEY = randomBytes(32);
const KEY_HEX = KEY.toString("hex");
const decrypting = { "x-proxy-decrypt": "true", "x-client-key": KEY_HEX };

async function req(server: TestServer, method: string, path: string, options: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const response = await fetch(server.url + path, {
    method,
    headers: {
      authorization: `Bearer ${options.token ?? "mock-token-alice"}`,
      ...(options.body !== undefined ? { "content-type": "application/json" } : {}),
      ...options.headers,
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null, errors: response.headers.get("x-svc-decrypt-errors") };
}

describe("bound sealing", () => {
  const place: SealBinding = { ownerId: "alice", kind: "document", recordId: "doc_1", field: "markdown" };

  test("a bound value carries the v2 tag and opens only with its own owner, kind, record and field", () => {
    const sealed = encryptString("hello", KEY, place);
    expect(sealed).toMatch(/^v2:[0-9a-f]{24}:[0-9a-f]{32}:[0-9a-f]+$/);
    expect(isCiphertextString(sealed)).toBe(true);
    expect(decryptString(sealed, KEY, place)).toBe("hello");
    const elsewhere: SealBinding[] = [
      { ...place, ownerId: "bob" }, { ...place, kind: "chat-message" }, { ...place, recordId: "doc_2" }, { ...place, field: "documentPayload" },
    ];
    for (const binding of elsewhere) expect(() => decryptString(sealed, KEY, binding)).toThrow();
    expect(() => decryptString(sealed, KEY)).toThrow();
    // Stripping the tag does not turn it into an unbound value: the tag it was sealed with is authenticated.
    expect(() => decryptString(sealed.slice(3), KEY)).toThrow();
  });

  test("an untagged value (sealed before binding, or by a client) still opens, with or without a binding", () => {
    const old = encryptString("from before", KEY);
    expect(old).toMatch(/^[0-9a-f]{24}:/);
    expect([decryptString(old, KEY), decryptString(old, KEY, place)]).toEqual(["from before", "from before"]);
  });
});

describe("paste attacks over HTTP", () => {
  let server: TestServer;
  let ws: string;
  beforeAll(async () => {
    server = await startTestServer();
    ws = await createWorkspace(server, "Binding");
  });
  afterAll(() => server.destroy());

  const sealedDocument = async (title: string, token?: string, workspaceId = ws) => {
    const created = await req(server, "POST", "/v1/documents", {
      token, body: { workspace_id: workspaceId, title, document_payload: { secret: title }, blocks_payload: [{ id: "b", content: title }], markdown: `# ${title}`, client_key: KEY_HEX },
    });
    expect(created.status).toBe(201);
    return created.body.document;
  };
  const read = (id: string, token?: string, workspaceId = ws) => req(server, "GET", `/v1/workspaces/${workspaceId}/documents/${id}`, { token, headers: decrypting });

  test("a document's encrypted markdown pasted into another document stays sealed there and is counted; both documents still open in place", async () => {
    const a = await sealedDocument("Alpha");
    const b = await sealedDocument("Beta");
    expect(a.markdown).toStartWith("v2:");
    const pasted = await req(server, "PATCH", `/v1/documents/${b.id}`, { body: { workspace_id: ws, markdown: a.markdown } });
    // The pasted value is ciphertext already: stored as sent, not sealed again.
    expect([pasted.status, pasted.body.document.markdown]).toEqual([200, a.markdown]);
    expect(await read(b.id)).toEqual({
      status: 200, errors: "2",
      body: { document: { ...pasted.body.document, document_payload: { secret: "Beta" }, blocks_payload: [{ id: "b", content: "Beta" }] }, blocks: [{ id: "b", content: "Beta" }], markdown: a.markdown },
    });
    expect((await read(a.id)).body.markdown).toBe("# Alpha");
    // The same through ?clientKey=, which decrypts before the response is built.
    const byQuery = await req(server, "GET", `/v1/workspaces/${ws}/documents/${b.id}?clientKey=${KEY_HEX}`);
    expect([byQuery.errors, byQuery.body.markdown, byQuery.body.document.document_payload]).toEqual(["1", a.markdown, { secret: "Beta" }]);
  });

  test("a payload moved to another field of the same document does not open there", async () => {
    const doc = await sealedDocument("Gamma");
    const swapped = await req(server, "PATCH", `/v1/documents/${doc.id}`, { body: { workspace_id: ws, blocks_payload: doc.document_payload } });
    expect(swapped.status).toBe(200);
    const got = await read(doc.id);
    expect([got.errors, got.body.blocks, got.body.document.document_payload]).toEqual(["2", doc.document_payload, { secret: "Gamma" }]);
  });

  test("a chat message's encryptedContent pasted into a document does not open there; the message still does", async () => {
    const thread = await req(server, "POST", `/v1/workspaces/${ws}/chats`, { body: { title: "Chat" } });
    const message = await req(server, "POST", `/v1/workspaces/${ws}/chats/${thread.body.id}/messages`, { body: { role: "user", content: "chat secret", client_key: KEY_HEX } });
    expect(message.status).toBe(201);
    const messages = await req(server, "GET", `/v1/workspaces/${ws}/chats/${thread.body.id}/messages`);
    const encryptedContent: string = messages.body[0].encryptedContent;
    expect(encryptedContent).toStartWith("v2:");
    const doc = await sealedDocument("Delta");
    expect((await req(server, "PATCH", `/v1/documents/${doc.id}`, { body: { workspace_id: ws, markdown: encryptedContent } })).status).toBe(200);
    const got = await read(doc.id);
    expect([got.errors, got.body.markdown]).toEqual(["2", encryptedContent]);
    const opened = await req(server, "GET", `/v1/workspaces/${ws}/chats/${thread.body.id}/messages`, { headers: decrypting });
    expect([opened.errors, opened.body[0].content]).toEqual([null, "chat secret"]);
  });

  test("a value pasted into another user's document does not open, even under the same client key", async () => {
    const mine = await sealedDocument("Epsilon");
    const bobWs = await createWorkspace(server, "Bob's", "mock-token-bob");
    const bobs = await sealedDocument("Zeta", "mock-token-bob", bobWs);
    const pasted = await req(server, "PATCH", `/v1/documents/${bobs.id}`, { token: "mock-token-bob", body: { workspace_id: bobWs, markdown: mine.markdown } });
    expect(pasted.status).toBe(200);
    const got = await read(bobs.id, "mock-token-bob", bobWs);
    expect([got.errors, got.body.markdown, got.body.document.document_payload]).toEqual(["2", mine.markdown, { secret: "Zeta" }]);
  });

  test("in the notes list, a payload pasted into another note stays sealed while its own note opens", async () => {
    const nws = await createWorkspace(server, "Notes");
    const a = await sealedDocument("Eta", undefined, nws);
    const note = await req(server, "POST", `/v1/workspaces/${nws}/notes`, { body: { documentId: "note-b", documentPayload: a.document_payload, blocksPayload: [] } });
    expect(note.status).toBe(201);
    const list = await req(server, "GET", `/v1/workspaces/${nws}/notes`, { headers: decrypting });
    const byId = Object.fromEntries(list.body.map((entry: { id: string; ciphertext: string }) => [entry.id, entry.ciphertext]));
    expect([list.errors, JSON.parse(byId[a.id]), byId["note-b"]]).toEqual(["1", { secret: "Eta" }, a.document_payload.ciphertext]);
    const single = await req(server, "GET", `/v1/workspaces/${nws}/notes/note-b`, { headers: decrypting });
    expect([single.errors, single.body.document]).toEqual(["1", a.document_payload]);
  });

  test("values stored before binding (untagged) still open: documents, chat messages and the notebook registry", async () => {
    const ows = await createWorkspace(server, "Old");
    const doc = await sealedDocument("Theta", undefined, ows);
    const thread = await req(server, "POST", `/v1/workspaces/${ows}/chats`, { body: { title: "Old chat" } });
    const message = await req(server, "POST", `/v1/workspaces/${ows}/chats/${thread.body.id}/messages`, { body: { role: "user", content: "x", client_key: KEY_HEX } });
    // Rows as an earlier version wrote them: the same AES-256-GCM, no tag, no associated data.
    const db = server.services.store.db;
    await run(db, sql`UPDATE documents SET markdown = ${encryptString("old markdown", KEY)}, document_payload = ${JSON.stringify(sealJson({ old: true }, KEY))}
                      WHERE owner_id = ${"alice"} AND id = ${doc.id}`);
    await run(db, sql`UPDATE chat_messages SET encrypted_content = ${encryptString("old message", KEY)} WHERE id = ${message.body.id}`);
    // An untagged registry is stored as sent, exactly as an earlier version's proxy stored its own.
    expect((await req(server, "POST", `/v1/workspaces/${ows}/notebooks`, { body: { ciphertext: encryptString('[{"id":"nb"}]', KEY) } })).status).toBe(200);
    const got = await read(doc.id, undefined, ows);
    expect([got.errors, got.body.markdown, got.body.document.document_payload, got.body.blocks]).toEqual([null, "old markdown", { old: true }, [{ id: "b", content: "Theta" }]]);
    const messages = await req(server, "GET", `/v1/workspaces/${ows}/chats/${thread.body.id}/messages`, { headers: decrypting });
    expect([messages.errors, messages.body[0].content]).toEqual([null, "old message"]);
    expect(await req(server, "GET", `/v1/workspaces/${ows}/notebooks`, { headers: decrypting })).toEqual({ status: 200, errors: null, body: { ciphertext: '[{"id":"nb"}]' } });
    expect((await req(server, "GET", `/v1/workspaces/${ows}/notebooks/nb`, { headers: decrypting })).body).toEqual({ notebook: { id: "nb" } });
  });
});

describe("reverse-proxy mode (MNEMO_PROXY_ENCRYPTION=1)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { MNEMO_PROXY_ENCRYPTION: "1" } });
  });
  afterAll(() => server.destroy());

  test("what the proxy seals is bound: a message pasted into a document, or a registry into another workspace, does not open", async () => {
    const headers = { "x-client-key": KEY_HEX };
    const ws = await createWorkspace(server, "Proxy");
    const other = await createWorkspace(server, "Proxy 2");
    const thread = await req(server, "POST", `/v1/workspaces/${ws}/chats`, { body: { title: "Chat" } });
    await req(server, "POST", `/v1/workspaces/${ws}/chats/${thread.body.id}/messages`, { body: { role: "user", content: "proxied secret" }, headers });
    const [stored] = (await req(server, "GET", `/v1/workspaces/${ws}/chats/${thread.body.id}/messages`)).body;
    expect(stored.encryptedContent).toStartWith("v2:");
    const doc = await req(server, "POST", "/v1/documents", { body: { workspace_id: ws, title: "Doc", markdown: stored.encryptedContent }, headers });
    expect([doc.status, doc.body.document.markdown]).toEqual([201, stored.encryptedContent]);
    const got = await req(server, "GET", `/v1/workspaces/${ws}/documents/${doc.body.document.id}`, { headers: decrypting });
    expect([got.errors, got.body.markdown]).toEqual(["2", stored.encryptedContent]);

    expect((await req(server, "POST", `/v1/workspaces/${ws}/notebooks`, { body: { ciphertext: '[{"id":"nb"}]' }, headers })).status).toBe(200);
    const registry = (await req(server, "GET", `/v1/workspaces/${ws}/notebooks`)).body.ciphertext;
    expect(registry).toStartWith("v2:");
    expect((await req(server, "POST", `/v1/workspaces/${other}/notebooks`, { body: { ciphertext: registry }, headers })).status).toBe(200);
    expect(await req(server, "GET", `/v1/workspaces/${other}/notebooks`, { headers: decrypting })).toEqual({ status: 200, errors: "1", body: { ciphertext: registry } });
    expect((await req(server, "GET", `/v1/workspaces/${other}/notebooks/nb`, { headers: decrypting })).status).toBe(404);
    expect((await req(server, "GET", `/v1/workspaces/${ws}/notebooks/nb`, { headers: decrypting })).body).toEqual({ notebook: { id: "nb" } });
  });
});
