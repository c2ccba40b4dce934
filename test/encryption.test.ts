import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { loadConfig } from "../src/config";
import {
  decryptString,
  encryptString,
  ENVELOPE_FORMAT,
  isCiphertextString,
  isEnvelope,
  sealJson,
} from "../src/crypto/aes-gcm";
import { parseClientKey } from "../src/crypto/client-key";
import { decryptDeep } from "../src/crypto/decrypt-deep";
import { documentFieldSeals } from "../src/documents/present";
import { AppError } from "../src/shared/app-error";
import { createLogger, redactSecrets } from "../src/lib/log";
import { startServer } from "../src/server";
import { databaseEnvFor } from "./helpers/database";
import { tempDir, withClient, type TestServer } from "./helpers/server";
import { createWorkspace } from "./helpers/workspaces";

const KEY = randomBytes(32);
const KEY_HEX = KEY.toString("hex");
const WRONG = randomBytes(32).toString("hex");
const ESCROWED = randomBytes(32);

/** Every log line of every server this file starts (checked for secrets at the end). */
const logLines: string[] = [];
const secrets = () => [
  KEY_HEX,
  KEY.toString("base64"),
  KEY.toString("base64url"),
  WRONG,
  ESCROWED.toString("hex"),
  ESCROWED.toString("base64"),
];

async function start(env: Record<string, string> = {}): Promise<TestServer> {
  const dataDir = tempDir();
  const config = loadConfig(
    { dataDir, port: 0, allowMockTokens: true, logLevel: "debug" },
    { EMBEDDINGS_PROVIDER: "none", ...(await databaseEnvFor(dataDir)), ...env },
  );
  return withClient(await startServer(config, { log: createLogger("debug", (line) => logLines.push(line)) }), dataDir);
}

/** A request whose response headers matter. */
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

const decrypting = (key?: string) => ({ "x-proxy-decrypt": "true", ...(key ? { "x-client-key": key } : {}) });

const PAYLOAD = { title: "Diary", body: { text: "payload-secret-phrase", list: [1, { deep: "nested-secret" }] } };
const BLOCKS = [{ id: "b1", type: "text", content: "blocks-secret-phrase" }];
const MARKDOWN = "# Diary\n\nmarkdown-secret-phrase";

describe("primitives", () => {
  test("client keys: 64 hex, base64 and base64url give the same 32 bytes; anything else is a 400 naming the field", () => {
    expect(parseClientKey(KEY_HEX, "k")).toEqual(KEY);
    expect(parseClientKey(KEY.toString("base64"), "k")).toEqual(KEY);
    expect(parseClientKey(KEY.toString("base64url"), "k")).toEqual(KEY);
    for (const bad of [
      "",
      "abc",
      KEY_HEX.slice(2),
      randomBytes(16).toString("base64"),
      "z".repeat(64),
      `${KEY_HEX}00`,
    ]) {
      let error: unknown;
      try {
        parseClientKey(bad, "X-Client-Key");
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).status).toBe(400);
      expect((error as AppError).message).toStartWith("X-Client-Key: ");
    }
  });

  test("AES-256-GCM round-trips text in the iv:tag:ct form; a wrong key or any flipped bit throws", () => {
    const sealed = encryptString("héllo wörld", KEY);
    expect(sealed).toMatch(/^[0-9a-f]{24}:[0-9a-f]{32}:[0-9a-f]+$/);
    expect(isCiphertextString(sealed)).toBe(true);
    expect(decryptString(sealed, KEY)).toBe("héllo wörld");
    expect(() => decryptString(sealed, Buffer.from(WRONG, "hex"))).toThrow();
    for (let i = 0; i < sealed.length; i++) {
      if (sealed[i] === ":") continue;
      const flipped = sealed.slice(0, i) + (sealed[i] === "0" ? "1" : "0") + sealed.slice(i + 1);
      expect(() => decryptString(flipped, KEY)).toThrow();
    }
    expect(decryptString(encryptString("", KEY), KEY)).toBe("");
  });

  test("10,000 encryptions of the same text never repeat an IV", () => {
    const ivs = new Set<string>();
    for (let i = 0; i < 10_000; i++) ivs.add(encryptString("same", KEY).split(":")[0]);
    expect(ivs.size).toBe(10_000);
  });

  test("envelopes hold JSON; decryptDeep walks arrays and objects, leaves what fails authentication and counts it", () => {
    const envelope = sealJson({ a: [1, "two"] }, KEY);
    expect(envelope.format).toBe(ENVELOPE_FORMAT);
    expect(isEnvelope(envelope)).toBe(true);
    const foreign = encryptString("not mine", Buffer.from(WRONG, "hex"));
    const input = {
      x: [envelope, { y: encryptString("deep", KEY), z: [[foreign]] }],
      n: 3,
      s: "plain",
      encryptedContent: encryptString("msg", KEY),
    };
    expect(decryptDeep(input, KEY)).toEqual({
      value: { x: [{ a: [1, "two"] }, { y: "deep", z: [[foreign]] }], n: 3, s: "plain", content: "msg" },
      errors: 1,
    });
    expect(decryptDeep(input, Buffer.from(WRONG, "hex")).errors).toBe(3);
    expect(decryptDeep(input, Buffer.from(WRONG, "hex")).value).toEqual({
      ...input,
      x: [input.x[0], { ...input.x[1], z: [["not mine"]] }],
    });
  });
});

describe("documents over HTTP", () => {
  let server: TestServer;
  let ws: string;
  beforeAll(async () => {
    server = await start();
    ws = await createWorkspace(server);
  });
  afterAll(() => server.destroy());

  async function createEncrypted(extra: Record<string, unknown> = {}) {
    const created = await req(server, "POST", "/v1/documents", {
      body: {
        workspace_id: ws,
        title: "Diary",
        document_payload: PAYLOAD,
        blocks_payload: BLOCKS,
        markdown: MARKDOWN,
        client_key: KEY_HEX,
        ...extra,
      },
    });
    expect(created.status).toBe(201);
    return created.body.document;
  }

  test("a create with client_key stores envelopes and an iv:tag:ct markdown; without X-Proxy-Decrypt they come back unchanged", async () => {
    const doc = await createEncrypted({ indexable_blocks: [{ id: "i1", content: "public words" }] });
    expect(isEnvelope(doc.document_payload)).toBe(true);
    expect(isEnvelope(doc.blocks_payload)).toBe(true);
    expect(isCiphertextString(doc.markdown)).toBe(true);
    const stored = await req(server, "GET", `/v1/workspaces/${ws}/documents/${doc.id}`);
    expect(stored).toEqual({
      status: 200,
      body: { document: doc, blocks: doc.blocks_payload, markdown: doc.markdown },
      errors: null,
    });
    // The same with a key but no X-Proxy-Decrypt (rule 1).
    expect(
      (await req(server, "GET", `/v1/workspaces/${ws}/documents/${doc.id}`, { headers: { "x-client-key": KEY_HEX } }))
        .body,
    ).toEqual(stored.body);
    // The indexable blocks stay plaintext and searchable.
    const raw = await req(server, "GET", `/v1/workspaces/${ws}/index/raw`);
    expect(raw.body.documents.find((d: { id: string }) => d.id === doc.id)?.blocks).toEqual([
      { id: "i1", type: "text", content: "public words" },
    ]);
  });

  test("X-Proxy-Decrypt with the header key, with the escrowed key, and with no key", async () => {
    const doc = await createEncrypted();
    const plain = { ...doc, document_payload: PAYLOAD, blocks_payload: BLOCKS, markdown: MARKDOWN };
    const path = `/v1/workspaces/${ws}/documents/${doc.id}`;
    expect(await req(server, "GET", path, { headers: decrypting(KEY.toString("base64url")) })).toEqual({
      status: 200,
      body: { document: plain, blocks: BLOCKS, markdown: MARKDOWN },
      errors: null,
    });
    // No header key and nothing escrowed: unchanged (rule 3).
    expect((await req(server, "GET", path, { headers: decrypting() })).body.document).toEqual(doc);
    await server.services.escrow.set("alice", KEY);
    try {
      expect((await req(server, "GET", path, { headers: decrypting() })).body.document).toEqual(plain);
      // The header wins over the escrowed key.
      const wrong = await req(server, "GET", path, { headers: decrypting(WRONG) });
      expect(wrong).toEqual({
        status: 200,
        body: { document: doc, blocks: doc.blocks_payload, markdown: doc.markdown },
        errors: "5",
      });
    } finally {
      await server.services.escrow.remove("alice");
    }
  });

  test("GET …/documents/:id?clientKey= decrypts before the response is built", async () => {
    const doc = await createEncrypted();
    const got = await req(server, "GET", `/v1/workspaces/${ws}/documents/${doc.id}?clientKey=${KEY_HEX}`);
    expect(got).toEqual({
      status: 200,
      body: {
        document: { ...doc, document_payload: PAYLOAD, blocks_payload: BLOCKS, markdown: MARKDOWN },
        blocks: BLOCKS,
        markdown: MARKDOWN,
      },
      errors: null,
    });
    const wrong = await req(server, "GET", `/v1/workspaces/${ws}/documents/${doc.id}?clientKey=${WRONG}`);
    expect(wrong.errors).toBe("3");
    expect(wrong.body.document).toEqual(doc);
    // The shared transformer still runs after it: with the right key the response is whole, and the count goes.
    const then = await req(server, "GET", `/v1/workspaces/${ws}/documents/${doc.id}?clientKey=${WRONG}`, {
      headers: decrypting(KEY_HEX),
    });
    expect([then.body.markdown, then.errors]).toEqual([MARKDOWN, null]);
    expect((await req(server, "GET", `/v1/workspaces/${ws}/documents/${doc.id}?clientKey=nope`)).body).toEqual({
      error: {
        code: "invalid_request",
        message: "clientKey: must be a 32-byte key as 64 hex characters or base64/base64url",
      },
    });
  });

  test("a flipped bit in one stored value: that value stays as stored, the others decrypt, the header counts 1", async () => {
    const doc = await createEncrypted();
    const ct: string = doc.document_payload.ciphertext;
    const at = ct.length - 3;
    const tampered = {
      format: ENVELOPE_FORMAT,
      ciphertext: ct.slice(0, at) + (ct[at] === "a" ? "b" : "a") + ct.slice(at + 1),
    };
    expect(
      (
        await req(server, "PATCH", `/v1/documents/${doc.id}`, {
          body: { workspace_id: ws, document_payload: tampered },
        })
      ).status,
    ).toBe(200);
    const got = await req(server, "GET", `/v1/workspaces/${ws}/documents/${doc.id}`, { headers: decrypting(KEY_HEX) });
    expect(got.errors).toBe("1");
    expect(got.body.document.document_payload).toEqual(tampered);
    expect(got.body.markdown).toBe(MARKDOWN);
  });

  test("a patch with clientKey seals only what it carries; limits apply to the plaintext", async () => {
    const doc = await createEncrypted();
    const patched = await req(server, "PATCH", `/v1/documents/${doc.id}`, {
      body: { workspaceId: ws, markdown: "new text", clientKey: KEY.toString("base64") },
    });
    expect(patched.status).toBe(200);
    expect(isCiphertextString(patched.body.document.markdown)).toBe(true);
    expect(patched.body.document.document_payload).toEqual(doc.document_payload);
    const big = "x".repeat(5 * 1024 * 1024 - 100);
    // ~10 MB once sealed, still accepted: the limit is on what the caller sent.
    const large = await req(server, "PATCH", `/v1/documents/${doc.id}`, {
      body: { workspace_id: ws, markdown: big, client_key: KEY_HEX },
    });
    expect(large.status).toBe(200);
    expect(large.body.document.markdown.length).toBe(2 * big.length + 58);
    expect(
      (
        await req(server, "PATCH", `/v1/documents/${doc.id}`, {
          body: { workspace_id: ws, markdown: "x", client_key: "short" },
        })
      ).body,
    ).toEqual({
      error: {
        code: "invalid_request",
        message: "client_key: must be a 32-byte key as 64 hex characters or base64/base64url",
      },
    });
    expect(
      (await req(server, "GET", `/v1/workspaces/${ws}/documents/${doc.id}`, { headers: decrypting("bad") })).body,
    ).toEqual({
      error: {
        code: "invalid_request",
        message: "X-Client-Key: must be a 32-byte key as 64 hex characters or base64/base64url",
      },
    });
  });

  test("another user never reads or decrypts alice's document (404)", async () => {
    const doc = await createEncrypted();
    const bob = await req(server, "GET", `/v1/workspaces/${ws}/documents/${doc.id}`, {
      token: "mock-token-bob",
      headers: decrypting(KEY_HEX),
    });
    expect(bob.status).toBe(404);
    expect(
      (
        await req(server, "PATCH", `/v1/documents/${doc.id}`, {
          token: "mock-token-bob",
          body: { workspace_id: ws, markdown: "x", client_key: KEY_HEX },
        })
      ).status,
    ).toBe(404);
  });
});

describe("every PKMS route, with and without X-Proxy-Decrypt", () => {
  let server: TestServer;
  let ws: string;
  beforeAll(async () => {
    server = await start();
    ws = await createWorkspace(server, "Routes");
  });
  afterAll(() => server.destroy());

  test("stored forms come back unchanged without the header and decrypted with it", async () => {
    const sealedNote = {
      documentPayload: sealJson(PAYLOAD, KEY),
      blocksPayload: sealJson(BLOCKS, KEY),
      markdown: encryptString(MARKDOWN, KEY),
    };
    const note = await req(server, "POST", `/v1/workspaces/${ws}/notes`, {
      body: { ...sealedNote, documentId: "note-1" },
    });
    expect(note.status).toBe(201);
    const doc = await req(server, "POST", `/v1/workspaces/${ws}/documents`, {
      body: { title: "T", document_payload: PAYLOAD, markdown: MARKDOWN, client_key: KEY_HEX },
    });
    expect(doc.status).toBe(201);
    const registry = encryptString(JSON.stringify([{ id: "nb1", name: "Private" }]), KEY);
    expect(
      (await req(server, "POST", `/v1/workspaces/${ws}/notebooks`, { body: { ciphertext: registry } })).status,
    ).toBe(200);
    const nested = {
      layers: [{ vector: sealJson({ v: [0.1, 0.2] }, KEY) }, [encryptString("edge label", KEY)]],
      plain: "kept",
    };
    const thread = await req(server, "POST", `/v1/workspaces/${ws}/chats`, { body: { title: "Chat" } });
    const message = await req(server, "POST", `/v1/workspaces/${ws}/chats/${thread.body.id}/messages`, {
      body: { role: "user", content: "chat-secret", client_key: KEY_HEX },
    });
    expect(message.status).toBe(201);

    const writes: Array<[string, string, unknown]> = [
      ["PUT", `/v1/workspaces/${ws}/vector-manifest`, { manifest: nested }],
      ["PUT", `/v1/workspaces/${ws}/search/block-index`, { index: nested }],
      ["PUT", `/v1/workspaces/${ws}/graph/block-edges`, { edges: [nested] }],
      ["PATCH", `/v1/workspaces/${ws}/notes/note-1`, { markdown: encryptString(MARKDOWN, KEY) }],
      ["PUT", `/v1/workspaces/${ws}/documents/${doc.body.document.id}`, { title: "T2" }],
      ["PATCH", `/v1/workspaces/${ws}/chats/${thread.body.id}`, { title: "Chat 2" }],
      ["POST", `/v1/workspaces`, { name: "Another" }],
    ];
    for (const [method, path, body] of writes) {
      const response = await req(server, method, path, { body, headers: decrypting(KEY_HEX) });
      expect([path, response.status]).toEqual([path, method === "POST" ? 201 : 200]);
    }

    const plainNested = { layers: [{ vector: { v: [0.1, 0.2] } }, ["edge label"]], plain: "kept" };
    const routes: Array<[string, (stored: any, decrypted: any) => void]> = [
      ["/v1/workspaces", (s, d) => expect(d).toEqual(s)],
      [`/v1/workspaces/${ws}`, (s, d) => expect(d).toEqual(s)],
      [`/v1/workspaces/${ws}/documents`, (s, d) => expect(d).toEqual(s)],
      [
        `/v1/workspaces/${ws}/documents/${doc.body.document.id}`,
        (s, d) => {
          expect(isEnvelope(s.document.document_payload)).toBe(true);
          expect([d.document.document_payload, d.markdown]).toEqual([PAYLOAD, MARKDOWN]);
        },
      ],
      [
        `/v1/workspaces/${ws}/notes`,
        (s, d) => {
          const stored = s.find((n: { id: string }) => n.id === "note-1");
          expect(stored.format).toBe(ENVELOPE_FORMAT);
          expect(JSON.parse(d.find((n: { id: string }) => n.id === "note-1").ciphertext)).toEqual(PAYLOAD);
        },
      ],
      [
        `/v1/workspaces/${ws}/notes/note-1`,
        (s, d) => {
          expect(s).toEqual(sealedNote.markdown ? { ...s } : s);
          expect(d).toEqual({ document: PAYLOAD, blocks: BLOCKS, markdown: MARKDOWN });
        },
      ],
      [
        `/v1/workspaces/${ws}/notebooks`,
        (s, d) =>
          expect([s, d]).toEqual([
            { ciphertext: registry },
            { ciphertext: JSON.stringify([{ id: "nb1", name: "Private" }]) },
          ]),
      ],
      [`/v1/workspaces/${ws}/chats`, (s, d) => expect(d).toEqual(s)],
      [
        `/v1/workspaces/${ws}/chats/${thread.body.id}/messages`,
        (s, d) => {
          expect(s).toEqual([
            {
              id: message.body.id,
              role: "user",
              encryptedContent: expect.stringMatching(/^[0-9a-f]{24}:[0-9a-f]{32}:/),
              parentId: null,
              createdAt: message.body.createdAt,
            },
          ]);
          expect(d).toEqual([
            {
              id: message.body.id,
              role: "user",
              content: "chat-secret",
              parentId: null,
              createdAt: message.body.createdAt,
            },
          ]);
        },
      ],
      [`/v1/workspaces/${ws}/index/status`, (s, d) => expect(d.workspaceId).toEqual(s.workspaceId)],
      [`/v1/workspaces/${ws}/index/raw`, (s, d) => expect(d).toEqual(s)],
      [
        `/v1/workspaces/${ws}/vector-manifest`,
        (s, d) => expect([s.manifest, d.manifest]).toEqual([nested, plainNested]),
      ],
      [`/v1/workspaces/${ws}/search/block-index`, (s, d) => expect([s.index, d.index]).toEqual([nested, plainNested])],
      [
        `/v1/workspaces/${ws}/graph/block-edges`,
        (s, d) => expect([s.edges, d.edges]).toEqual([[nested], [plainNested]]),
      ],
    ];
    for (const [path, check] of routes) {
      const stored = await req(server, "GET", path);
      const decrypted = await req(server, "GET", path, { headers: decrypting(KEY_HEX) });
      expect([path, stored.status, decrypted.status, decrypted.errors]).toEqual([path, 200, 200, null]);
      check(stored.body, decrypted.body);
    }
    // The notebook detail opens an encrypted registry only when asked to decrypt.
    expect((await req(server, "GET", `/v1/workspaces/${ws}/notebooks/nb1`)).status).toBe(404);
    expect(await req(server, "GET", `/v1/workspaces/${ws}/notebooks/nb1`, { headers: decrypting(KEY_HEX) })).toEqual({
      status: 200,
      body: { notebook: { id: "nb1", name: "Private" } },
      errors: null,
    });
    for (const [method, path] of [
      ["POST", `/v1/workspaces/${ws}/reindex`],
      ["POST", `/v1/workspaces/${ws}/index/clear`],
    ]) {
      expect((await req(server, method, path, { headers: decrypting(KEY_HEX) })).status).toBe(200);
    }
    // A wrong key: everything as stored, the header counts the values that failed.
    const wrong = await req(server, "GET", `/v1/workspaces/${ws}/vector-manifest`, { headers: decrypting(WRONG) });
    expect([wrong.body.manifest, wrong.errors]).toEqual([nested, "2"]);
  });
});

describe("reverse-proxy mode (MNEMO_PROXY_ENCRYPTION=1)", () => {
  let server: TestServer;
  let ws: string;
  beforeAll(async () => {
    server = await start({ MNEMO_PROXY_ENCRYPTION: "1" });
    ws = await createWorkspace(server, "Proxy");
  });
  afterAll(() => server.destroy());

  test("plaintext legacy notes, unified documents, messages and the notebook registry are sealed with the resolved key", async () => {
    const headers = { "x-client-key": KEY_HEX };
    const note = await req(server, "POST", `/v1/workspaces/${ws}/notes`, {
      body: { documentPayload: PAYLOAD, blocksPayload: BLOCKS, markdown: MARKDOWN },
      headers,
    });
    expect(note.status).toBe(201);
    const stored = await req(server, "GET", `/v1/workspaces/${ws}/notes/${note.body.id}`);
    expect([
      isEnvelope(stored.body.document),
      isEnvelope(stored.body.blocks),
      isCiphertextString(stored.body.markdown),
    ]).toEqual([true, true, true]);
    expect(
      (await req(server, "GET", `/v1/workspaces/${ws}/notes/${note.body.id}`, { headers: decrypting(KEY_HEX) })).body,
    ).toEqual({
      document: PAYLOAD,
      blocks: BLOCKS,
      markdown: MARKDOWN,
    });
    // The payload's title is not copied into the (plaintext) document title.
    expect((await req(server, "GET", `/v1/workspaces/${ws}/documents`)).body.documents[0].title).toBe("Untitled");

    const doc = await req(server, "POST", "/v1/documents", {
      body: { workspace_id: ws, title: "T", document_payload: PAYLOAD, markdown: MARKDOWN },
      headers,
    });
    expect([isEnvelope(doc.body.document.document_payload), isCiphertextString(doc.body.document.markdown)]).toEqual([
      true,
      true,
    ]);

    expect(
      (await req(server, "POST", `/v1/workspaces/${ws}/notebooks`, { body: { ciphertext: '[{"id":"nb"}]' }, headers }))
        .status,
    ).toBe(200);
    const registry = await req(server, "GET", `/v1/workspaces/${ws}/notebooks`);
    expect(isCiphertextString(registry.body.ciphertext)).toBe(true);
    expect((await req(server, "GET", `/v1/workspaces/${ws}/notebooks`, { headers: decrypting(KEY_HEX) })).body).toEqual(
      { ciphertext: '[{"id":"nb"}]' },
    );

    const thread = await req(server, "POST", `/v1/workspaces/${ws}/chats`, { body: {} });
    await req(server, "POST", `/v1/workspaces/${ws}/chats/${thread.body.id}/messages`, {
      body: { role: "user", content: "proxy chat" },
      headers,
    });
    const messages = await req(server, "GET", `/v1/workspaces/${ws}/chats/${thread.body.id}/messages`);
    expect(messages.body[0].content).toBeUndefined();
    expect(isCiphertextString(messages.body[0].encryptedContent)).toBe(true);
  });

  test("the escrowed key is used when no header is sent; with neither, a payload write is refused and nothing is stored", async () => {
    await server.services.escrow.set("carol", ESCROWED);
    const token = "mock-token-carol";
    const cws = await createWorkspace(server, "Carol", token);
    const note = await req(server, "POST", `/v1/workspaces/${cws}/notes`, {
      token,
      body: { documentPayload: { a: 1 }, blocksPayload: [] },
    });
    expect(note.status).toBe(201);
    const stored = await req(server, "GET", `/v1/workspaces/${cws}/notes/${note.body.id}`, { token });
    const noteFields = documentFieldSeals("carol", note.body.id, {
      document: "documentPayload",
      blocks: "blocksPayload",
      markdown: "markdown",
    });
    expect(decryptDeep(stored.body, ESCROWED, noteFields)).toEqual({
      value: { document: { a: 1 }, blocks: [], markdown: "" },
      errors: 0,
    });

    const dws = await createWorkspace(server, "Dave", "mock-token-dave");
    const refused = await req(server, "POST", `/v1/workspaces/${dws}/notes`, {
      token: "mock-token-dave",
      body: { documentPayload: { a: 1 }, blocksPayload: [] },
    });
    expect(refused.body).toEqual({
      error: {
        code: "invalid_request",
        message:
          "X-Client-Key: this server encrypts every write (reverse-proxy mode); send X-Client-Key or escrow a client key",
      },
    });
    expect((await req(server, "GET", `/v1/workspaces/${dws}/notes`, { token: "mock-token-dave" })).body).toEqual([]);
  });
});

test("no client key, master key or ciphertext key reached the logs of this file", () => {
  expect(logLines.length).toBeGreaterThan(0);
  const leaked = logLines.filter((line) => secrets().some((secret) => line.includes(secret)));
  expect(leaked).toEqual([]);
});

test("the log redactor hides keys, key-named fields and credentials wherever they appear", () => {
  const lines = [
    `GET /v1/x?clientKey=${KEY_HEX}&a=1`,
    `{"x-client-key":"${KEY.toString("base64")}"}`,
    `client_key: "${KEY.toString("base64url")}"`,
    `SERVER_MASTER_KEY=${WRONG}`,
    "authorization=Bearer eyJhbGciOi.abc.def",
    "token svc_dev_AbCdEf123456",
    `bare ${KEY_HEX} hex`,
  ];
  const redacted = lines.map(redactSecrets);
  expect(
    redacted.filter((line) => secrets().some((secret) => line.includes(secret)) || /eyJ|AbCdEf/.test(line)),
  ).toEqual([]);
  expect(redactSecrets('keyId="key_1" requestId="r1" path="/v1/x"')).toBe('keyId="key_1" requestId="r1" path="/v1/x"');
});
