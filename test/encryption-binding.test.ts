import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { bindingAad, type SealBinding } from "../src/crypto/binding";
import { run, sql } from "../src/db/store";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "./helpers/cli";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";
import { createWorkspace } from "./helpers/workspaces";

/**
 * Values sealed with a client's key come back in the contract's form, `iv:tag:ct` with no
 * associated data, which the client opens with its key alone; what keeps them in their
 * place is the server's seal tag beside each stored field. A value moved to another
 * record, field or user by whoever edits the database stays sealed there and is counted in
 * X-Svc-Decrypt-Errors.
 */
const KEY = randomBytes(32);
const KEY_HEX = KEY.toString("hex");
const decrypting = { "x-proxy-decrypt": "true", "x-client-key": KEY_HEX };
const CONTRACT_FORM = /^[0-9a-f]{24}:[0-9a-f]{32}:(?:[0-9a-f]{2})*$/;

/** What a client holding its key does, per the contract: AES-256-GCM, no associated data, nothing of Mnemo's code. */
function openWithKeyAlone(value: string, key = KEY): string {
  const [iv, tag, ciphertext, ...rest] = value.split(":");
  if (rest.length) throw new Error(`not iv:tag:ciphertext: ${rest.length + 3} fields`);
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "hex"));
  decipher.setAuthTag(Buffer.from(tag, "hex"));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, "hex")), decipher.final()]).toString("utf8");
}

/** What a client seals on its own side, per the contract. */
function sealWithKeyAlone(plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", KEY, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return `${iv.toString("hex")}:${cipher.getAuthTag().toString("hex")}:${ciphertext.toString("hex")}`;
}

/** A value of the earlier bound format (`v2:`, its place as associated data), as an earlier version stored it. */
function sealBoundV2(plaintext: string, binding: SealBinding): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", KEY, iv);
  cipher.setAAD(bindingAad(binding));
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return `v2:${iv.toString("hex")}:${cipher.getAuthTag().toString("hex")}:${ciphertext.toString("hex")}`;
}

async function req(
  server: TestServer,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
) {
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
  return {
    status: response.status,
    body: text ? JSON.parse(text) : null,
    errors: response.headers.get("x-svc-decrypt-errors"),
  };
}

/** Helpers over one server: sealed documents and messages, reads, and the attacker's SQL. */
function fixture(get: () => TestServer) {
  const sealedDocument = async (workspaceId: string, title: string, token?: string) => {
    const created = await req(get(), "POST", "/v1/documents", {
      token,
      body: {
        workspace_id: workspaceId,
        title,
        document_payload: { secret: title },
        blocks_payload: [{ id: "b", content: title }],
        markdown: `# ${title}`,
        client_key: KEY_HEX,
      },
    });
    expect(created.status).toBe(201);
    return created.body.document as {
      id: string;
      markdown: string;
      document_payload: { format: string; ciphertext: string };
      blocks_payload: { ciphertext: string };
    };
  };
  const read = (workspaceId: string, id: string, token?: string) =>
    req(get(), "GET", `/v1/workspaces/${workspaceId}/documents/${id}`, { token, headers: decrypting });
  const sealedMessage = async (workspaceId: string, content: string) => {
    const thread = await req(get(), "POST", `/v1/workspaces/${workspaceId}/chats`, { body: { title: "Chat" } });
    expect(
      (
        await req(get(), "POST", `/v1/workspaces/${workspaceId}/chats/${thread.body.id}/messages`, {
          body: { role: "user", content, client_key: KEY_HEX },
        })
      ).status,
    ).toBe(201);
    const [message] = (await req(get(), "GET", `/v1/workspaces/${workspaceId}/chats/${thread.body.id}/messages`)).body;
    return {
      threadId: thread.body.id as string,
      id: message.id as string,
      encryptedContent: message.encryptedContent as string,
    };
  };
  const messages = (workspaceId: string, threadId: string) =>
    req(get(), "GET", `/v1/workspaces/${workspaceId}/chats/${threadId}/messages`, { headers: decrypting });
  /** The attacker: a direct edit of the store of record. */
  const edit = (statement: ReturnType<typeof sql>) => run(get().services.store.db, statement);
  return { sealedDocument, read, sealedMessage, messages, edit };
}

describe("the contract's ciphertext form", () => {
  let server: TestServer;
  let proxy: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
    proxy = await startTestServer({ env: { MNEMO_PROXY_ENCRYPTION: "1" } });
  });
  afterAll(async () => {
    await server.destroy();
    await proxy.destroy();
  });

  test("a client opens what it gets back with its key alone: markdown, payload and blocks envelopes, chat messages", async () => {
    const ws = await createWorkspace(server, "Form");
    const doc = await fixture(() => server).sealedDocument(ws, "Iota");
    const got = (await req(server, "GET", `/v1/workspaces/${ws}/documents/${doc.id}`)).body;
    for (const value of [got.markdown, got.document.document_payload.ciphertext, got.blocks.ciphertext])
      expect(value).toMatch(CONTRACT_FORM);
    expect([
      openWithKeyAlone(got.markdown),
      JSON.parse(openWithKeyAlone(got.document.document_payload.ciphertext)),
      JSON.parse(openWithKeyAlone(got.blocks.ciphertext)),
    ]).toEqual(["# Iota", { secret: "Iota" }, [{ id: "b", content: "Iota" }]]);
    const message = await fixture(() => server).sealedMessage(ws, "chat secret");
    expect([message.encryptedContent, openWithKeyAlone(message.encryptedContent)]).toEqual([
      expect.stringMatching(CONTRACT_FORM),
      "chat secret",
    ]);
  });

  test("in reverse-proxy mode too: what X-Client-Key sealed, a note body and the notebook registry", async () => {
    const headers = { "x-client-key": KEY_HEX };
    const ws = await createWorkspace(proxy, "Proxy form");
    const doc = await req(proxy, "POST", "/v1/documents", {
      body: { workspace_id: ws, title: "P", markdown: "proxied markdown" },
      headers,
    });
    expect([doc.status, openWithKeyAlone(doc.body.document.markdown)]).toEqual([201, "proxied markdown"]);
    expect(
      (await req(proxy, "POST", `/v1/workspaces/${ws}/notebooks`, { body: { ciphertext: '[{"id":"nb"}]' }, headers }))
        .status,
    ).toBe(200);
    const registry = (await req(proxy, "GET", `/v1/workspaces/${ws}/notebooks`)).body.ciphertext;
    expect([registry, openWithKeyAlone(registry)]).toEqual([expect.stringMatching(CONTRACT_FORM), '[{"id":"nb"}]']);
    const note = await req(proxy, "POST", `/v1/workspaces/${ws}/notes`, {
      body: { documentId: "n1", documentPayload: { body: "note text" }, blocksPayload: [] },
      headers,
    });
    expect(note.status).toBe(201);
    const stored = (await req(proxy, "GET", `/v1/workspaces/${ws}/notes/n1`)).body.document;
    expect(JSON.parse(openWithKeyAlone(stored.ciphertext))).toEqual({ body: "note text" });
  });

  test("a value the client sealed itself is stored as sent and opens through the server where it was stored", async () => {
    const ws = await createWorkspace(server, "Own");
    const mine = sealWithKeyAlone("sealed by the client");
    const created = await req(server, "POST", "/v1/documents", {
      body: { workspace_id: ws, title: "Own", markdown: mine },
    });
    expect(created.body.document.markdown).toBe(mine);
    expect(await fixture(() => server).read(ws, created.body.document.id)).toMatchObject({
      status: 200,
      errors: null,
      body: { markdown: "sealed by the client" },
    });
  });
});

describe("a value moved by whoever edits the database", () => {
  let server: TestServer;
  let ws: string;
  const f = fixture(() => server);
  beforeAll(async () => {
    server = await startTestServer();
    ws = await createWorkspace(server, "Moves");
  });
  afterAll(() => server.destroy());

  test("a document's markdown copied into another document stays sealed there and is counted; both documents' own values open", async () => {
    const a = await f.sealedDocument(ws, "Alpha");
    const b = await f.sealedDocument(ws, "Beta");
    await f.edit(sql`UPDATE documents SET markdown = ${a.markdown} WHERE owner_id = ${"alice"} AND id = ${b.id}`);
    const got = await f.read(ws, b.id);
    // Counted once where the response carries it: in the document and beside it.
    expect([got.status, got.errors, got.body.markdown, got.body.document.document_payload, got.body.blocks]).toEqual([
      200,
      "2",
      a.markdown,
      { secret: "Beta" },
      [{ id: "b", content: "Beta" }],
    ]);
    expect((await f.read(ws, a.id)).body.markdown).toBe("# Alpha");
    // The same through ?clientKey=, which decrypts before the response is built.
    const byQuery = await req(server, "GET", `/v1/workspaces/${ws}/documents/${b.id}?clientKey=${KEY_HEX}`);
    expect([byQuery.errors, byQuery.body.markdown, byQuery.body.document.document_payload]).toEqual([
      "1",
      a.markdown,
      { secret: "Beta" },
    ]);
  });

  test("a payload moved to another field, or nested inside a plaintext payload, does not open there", async () => {
    const doc = await f.sealedDocument(ws, "Gamma");
    await f.edit(
      sql`UPDATE documents SET blocks_payload = ${JSON.stringify(doc.document_payload)} WHERE id = ${doc.id}`,
    );
    const swapped = await f.read(ws, doc.id);
    expect([swapped.errors, swapped.body.blocks, swapped.body.document.document_payload]).toEqual([
      "2",
      doc.document_payload,
      { secret: "Gamma" },
    ]);
    const plain = await req(server, "POST", "/v1/documents", {
      body: { workspace_id: ws, title: "Plain", document_payload: { note: "plain" } },
    });
    await f.edit(
      sql`UPDATE documents SET document_payload = ${JSON.stringify({ note: doc.markdown })} WHERE id = ${plain.body.document.id}`,
    );
    const nested = await f.read(ws, plain.body.document.id);
    expect([nested.errors, nested.body.document.document_payload]).toEqual(["1", { note: doc.markdown }]);
  });

  test("a chat message's encryptedContent moved into a document or another message does not open there; the message's own does", async () => {
    const one = await f.sealedMessage(ws, "first secret");
    const two = await f.sealedMessage(ws, "second secret");
    const doc = await f.sealedDocument(ws, "Delta");
    await f.edit(sql`UPDATE documents SET markdown = ${one.encryptedContent} WHERE id = ${doc.id}`);
    expect([(await f.read(ws, doc.id)).errors, (await f.read(ws, doc.id)).body.markdown]).toEqual([
      "2",
      one.encryptedContent,
    ]);
    await f.edit(sql`UPDATE chat_messages SET encrypted_content = ${one.encryptedContent} WHERE id = ${two.id}`);
    const moved = await f.messages(ws, two.threadId);
    expect([moved.errors, moved.body[0].encryptedContent, moved.body[0].content]).toEqual([
      "1",
      one.encryptedContent,
      undefined,
    ]);
    expect((await f.messages(ws, one.threadId)).body[0]).toMatchObject({ content: "first secret" });
  });

  test("a value moved into another user's document does not open, even under the same client key", async () => {
    const mine = await f.sealedDocument(ws, "Epsilon");
    const bobWs = await createWorkspace(server, "Bob's", "mock-token-bob");
    const bobs = await f.sealedDocument(bobWs, "Zeta", "mock-token-bob");
    await f.edit(sql`UPDATE documents SET markdown = ${mine.markdown} WHERE owner_id = ${"bob"} AND id = ${bobs.id}`);
    const got = await f.read(bobWs, bobs.id, "mock-token-bob");
    expect([got.errors, got.body.markdown, got.body.document.document_payload]).toEqual([
      "2",
      mine.markdown,
      { secret: "Zeta" },
    ]);
  });

  test("in the notes list and a single note, a payload moved into another note stays sealed while its own note opens", async () => {
    const nws = await createWorkspace(server, "Notes");
    const a = await f.sealedDocument(nws, "Eta");
    expect(
      (
        await req(server, "POST", `/v1/workspaces/${nws}/notes`, {
          body: { documentId: "note-b", documentPayload: { plain: true }, blocksPayload: [] },
        })
      ).status,
    ).toBe(201);
    await f.edit(
      sql`UPDATE documents SET document_payload = ${JSON.stringify(a.document_payload)} WHERE id = ${"note-b"}`,
    );
    const list = await req(server, "GET", `/v1/workspaces/${nws}/notes`, { headers: decrypting });
    const byId = Object.fromEntries(
      list.body.map((entry: { id: string; ciphertext: string }) => [entry.id, entry.ciphertext]),
    );
    expect([list.errors, JSON.parse(byId[a.id]), byId["note-b"]]).toEqual([
      "1",
      { secret: "Eta" },
      a.document_payload.ciphertext,
    ]);
    const single = await req(server, "GET", `/v1/workspaces/${nws}/notes/note-b`, { headers: decrypting });
    expect([single.errors, single.body.document]).toEqual(["1", a.document_payload]);
  });

  test("a tag removed, or copied beside the moved value, does not let it open", async () => {
    const a = await f.sealedDocument(ws, "Kappa");
    const b = await f.sealedDocument(ws, "Lambda");
    await f.edit(sql`DELETE FROM seal_tags WHERE record_id = ${a.id} AND field = ${"markdown"}`);
    expect([(await f.read(ws, a.id)).errors, (await f.read(ws, a.id)).body.markdown]).toEqual(["2", a.markdown]);
    await f.edit(sql`UPDATE documents SET markdown = ${b.markdown} WHERE id = ${a.id}`);
    await f.edit(
      sql`INSERT INTO seal_tags (owner_id, kind, record_id, field, tag) SELECT owner_id, kind, ${a.id}, field, tag FROM seal_tags WHERE record_id = ${b.id} AND field = ${"markdown"}`,
    );
    expect((await f.read(ws, a.id)).errors).toBe("2");
    // Written again through the API, the field is tagged again.
    expect(
      (
        await req(server, "PATCH", `/v1/documents/${a.id}`, {
          body: { workspace_id: ws, markdown: "fresh", client_key: KEY_HEX },
        })
      ).status,
    ).toBe(200);
    expect([(await f.read(ws, a.id)).errors, (await f.read(ws, a.id)).body.markdown]).toEqual([null, "fresh"]);
  });
});

describe("the earlier bound format (v2:) and stores from before seal tags", () => {
  let server: TestServer;
  const f = fixture(() => server);
  afterAll(() => server.destroy());

  test("v2 values keep opening in their place, read as they are, and not where they were moved", async () => {
    server = await startTestServer();
    const ws = await createWorkspace(server, "Earlier");
    const doc = await f.sealedDocument(ws, "Mu");
    const other = await f.sealedDocument(ws, "Nu");
    const message = await f.sealedMessage(ws, "x");
    const place = (kind: SealBinding["kind"], recordId: string, field: string): SealBinding => ({
      ownerId: "alice",
      kind,
      recordId,
      field,
    });
    const markdown = sealBoundV2("earlier markdown", place("document", doc.id, "markdown"));
    const payload = {
      format: "svc.om.encrypted",
      ciphertext: sealBoundV2(JSON.stringify({ earlier: true }), place("document", doc.id, "documentPayload")),
    };
    await f.edit(
      sql`UPDATE documents SET markdown = ${markdown}, document_payload = ${JSON.stringify(payload)} WHERE id = ${doc.id}`,
    );
    // They carry their place themselves: no tag is needed.
    await f.edit(sql`DELETE FROM seal_tags WHERE record_id = ${doc.id} AND field <> ${"blocksPayload"}`);
    await f.edit(
      sql`UPDATE chat_messages SET encrypted_content = ${sealBoundV2("earlier message", place("chat-message", message.id, "encryptedContent"))} WHERE id = ${message.id}`,
    );
    const got = await f.read(ws, doc.id);
    expect([got.errors, got.body.markdown, got.body.document.document_payload, got.body.blocks]).toEqual([
      null,
      "earlier markdown",
      { earlier: true },
      [{ id: "b", content: "Mu" }],
    ]);
    expect((await f.messages(ws, message.threadId)).body[0]).toMatchObject({ content: "earlier message" });
    await f.edit(sql`UPDATE documents SET markdown = ${markdown} WHERE id = ${other.id}`);
    expect([(await f.read(ws, other.id)).errors, (await f.read(ws, other.id)).body.markdown]).toEqual(["2", markdown]);
  });

  test("a store from before seal tags is tagged as found at its next start: its values open, and a move after that does not", async () => {
    const ws = await createWorkspace(server, "Upgrade");
    const a = await f.sealedDocument(ws, "Xi");
    const b = await f.sealedDocument(ws, "Omicron");
    expect(
      (
        await req(server, "POST", `/v1/workspaces/${ws}/notebooks`, {
          body: { ciphertext: sealWithKeyAlone('[{"id":"nb"}]') },
        })
      ).status,
    ).toBe(200);
    // As a store was before tags: no tag key, no tags.
    await f.edit(sql`DELETE FROM seal_tags`);
    await f.edit(sql`DELETE FROM settings WHERE key = ${"seal-tags:key"}`);
    const dataDir = server.dataDir;
    await server.stop();
    server = await startTestServer({ dataDir });
    expect([(await f.read(ws, a.id)).errors, (await f.read(ws, a.id)).body.markdown]).toEqual([null, "# Xi"]);
    expect((await req(server, "GET", `/v1/workspaces/${ws}/notebooks/nb`, { headers: decrypting })).body).toEqual({
      notebook: { id: "nb" },
    });
    await f.edit(sql`UPDATE documents SET markdown = ${a.markdown} WHERE id = ${b.id}`);
    expect((await f.read(ws, b.id)).errors).toBe("2");
  });

  test("a registry moved to another workspace does not open there, and its notebooks are not found", async () => {
    const ws = await createWorkspace(server, "Registry");
    const other = await createWorkspace(server, "Registry 2");
    const registry = sealWithKeyAlone('[{"id":"nb"}]');
    expect(
      (await req(server, "POST", `/v1/workspaces/${ws}/notebooks`, { body: { ciphertext: registry } })).status,
    ).toBe(200);
    expect(
      (await req(server, "POST", `/v1/workspaces/${other}/notebooks`, { body: { ciphertext: "[]" } })).status,
    ).toBe(200);
    await f.edit(
      sql`UPDATE workspace_artifacts SET value = ${JSON.stringify(registry)} WHERE workspace_id = ${other} AND kind = ${"notebooks"}`,
    );
    expect(await req(server, "GET", `/v1/workspaces/${other}/notebooks`, { headers: decrypting })).toEqual({
      status: 200,
      errors: "1",
      body: { ciphertext: registry },
    });
    expect((await req(server, "GET", `/v1/workspaces/${other}/notebooks/nb`, { headers: decrypting })).status).toBe(
      404,
    );
    expect((await req(server, "GET", `/v1/workspaces/${ws}/notebooks/nb`, { headers: decrypting })).body).toEqual({
      notebook: { id: "nb" },
    });
  });
});

describe("a master key rotation", () => {
  test("moves the seal tags' key with the escrowed keys: after a restart on the new key, sealed values still open", async () => {
    const [oldMaster, newMaster] = [randomBytes(32), randomBytes(32)];
    let server = await startTestServer({ env: { SERVER_MASTER_KEY: oldMaster.toString("hex") } });
    try {
      const ws = await createWorkspace(server, "Rotation");
      const doc = await fixture(() => server).sealedDocument(ws, "Pi");
      expect(await server.services.escrow.rotateMaster(newMaster)).toEqual({ rotated: 0 });
      const dataDir = server.dataDir;
      await server.stop();
      server = await startTestServer({ dataDir, env: { SERVER_MASTER_KEY: newMaster.toString("hex") } });
      const got = await fixture(() => server).read(ws, doc.id);
      expect([got.errors, got.body.markdown]).toEqual([null, "# Pi"]);
    } finally {
      await server.destroy();
    }
  });
});

describe("an export imported elsewhere", () => {
  test("its sealed fields are tagged in their new place and open through the server there", async () => {
    const source = await startTestServer();
    const targetDir = tempDir();
    let target: TestServer | null = null;
    try {
      const ws = await createWorkspace(source, "Exported");
      const doc = await fixture(() => source).sealedDocument(ws, "Rho");
      const message = await fixture(() => source).sealedMessage(ws, "exported message");
      const file = join(targetDir, "..", `export-${Date.now()}.jsonl`);
      const dataDir = source.dataDir;
      await source.stop();
      expect((await runCli(["export", "--user", "alice", "--out", file, "--data", dataDir])).exitCode).toBe(0);
      // The target store exists (and has its tag key) before the import.
      target = await startTestServer({ dataDir: targetDir });
      await target.stop();
      const imported = await runCli(["import", file, "--user", "alice", "--data", targetDir]);
      expect([imported.exitCode, imported.stderr]).toEqual([0, expect.not.stringContaining("rror")]);
      target = await startTestServer({ dataDir: targetDir });
      const got = await fixture(() => target!).read(ws, doc.id);
      expect([got.errors, got.body.markdown, got.body.document.document_payload]).toEqual([
        null,
        "# Rho",
        { secret: "Rho" },
      ]);
      expect((await fixture(() => target!).messages(ws, message.threadId)).body[0]).toMatchObject({
        content: "exported message",
      });
    } finally {
      await target?.destroy();
      rmSync(source.dataDir, { recursive: true, force: true });
    }
  });
});
