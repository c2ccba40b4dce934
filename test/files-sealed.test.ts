import { afterAll, describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import {
  openSealedRange,
  plainSize,
  SEALED_CHUNK_BYTES,
  sealedSize,
  SealedFileError,
  sealStream,
} from "../src/crypto/file-seal";
import { all, sql } from "../src/db/store";
import { fromRecord, TABLE_BY_TYPE, toRecord } from "../src/transfer/tables";
import { startTestServer } from "./helpers/server";
import { apiError, createWorkspace } from "./helpers/workspaces";

/** Files in reverse-proxy mode (MNEMO_PROXY_ENCRYPTION=1): sealed at rest with the caller's client key. */
const server = await startTestServer({ env: { MNEMO_PROXY_ENCRYPTION: "1" } });
afterAll(() => server.destroy());

const KEY = randomBytes(32).toString("hex");
const OTHER = randomBytes(32).toString("hex");
const NO_KEY = apiError(
  "invalid_request",
  "X-Client-Key: this server encrypts every write (reverse-proxy mode); send X-Client-Key or escrow a client key",
);
const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const bytesOf = (n: number, seed = 5) => new Uint8Array(n).map((_, i) => (i * 29 + seed + (i >> 16)) & 0xff);
const opening = (key = KEY) => ({ "x-proxy-decrypt": "true", "x-client-key": key });

async function uploadUrl(
  ws: string,
  filename: string,
  contentType: string,
  headers: Record<string, string> = { "x-client-key": KEY },
  token?: string,
) {
  return server.call("POST", `/v1/workspaces/${ws}/files/upload-url`, {
    body: { filename, contentType },
    headers,
    token,
  });
}
const put = (
  url: string,
  body: Uint8Array | string,
  contentType: string,
  headers: Record<string, string> = { "x-client-key": KEY },
) =>
  fetch(url, { method: "PUT", body, headers: { "content-type": contentType, ...headers } }).then(
    async (r) => [r.status, await r.json()] as [number, any],
  );
const download = (ws: string, key: string, headers: Record<string, string> = {}, token = "mock-token-alice") =>
  fetch(`${server.url}/v1/workspaces/${ws}/files/${key}`, {
    headers: { authorization: `Bearer ${token}`, ...headers },
  });

async function uploadSealed(ws: string, name: string, contentType: string, bytes: Uint8Array | string, token?: string) {
  const [, issued] = await uploadUrl(ws, name, contentType, { "x-client-key": KEY }, token);
  const [status, info] = await put(issued.url, bytes, contentType);
  if (status !== 201) throw new Error(`PUT: ${status} ${JSON.stringify(info)}`);
  return info as { key: string; sha256: string; size: number };
}

describe("presigned uploads in reverse-proxy mode", () => {
  test("without a resolvable key, upload-url and the PUT are 400 naming X-Client-Key; nothing is stored", async () => {
    const ws = await createWorkspace(server, "No key");
    expect(await uploadUrl(ws, "a.txt", "text/plain", {})).toEqual([400, NO_KEY]);
    expect(await uploadUrl(ws, "a.txt", "text/plain", { "x-client-key": "not-a-key" })).toEqual([
      400,
      apiError("invalid_request", "X-Client-Key: must be a 32-byte key as 64 hex characters or base64/base64url"),
    ]);
    const [, issued] = await uploadUrl(ws, "a.txt", "text/plain");
    expect(await put(issued.url, "private words", "text/plain", {})).toEqual([400, NO_KEY]);
    expect(await server.call("GET", `/v1/workspaces/${ws}/files`)).toEqual([
      200,
      { files: [], nextCursor: null, hasMore: false },
    ]);
    // A refused PUT did not use the URL up.
    expect((await put(issued.url, "private words", "text/plain"))[0]).toBe(201);
  });

  test("the bytes are sealed: listed with their own size, sent sealed without X-Proxy-Decrypt, opened with it", async () => {
    const ws = await createWorkspace(server, "Sealed");
    const text = "The vault code is 4417, said nobody.";
    const info = await uploadSealed(ws, "secret.txt", "text/plain", text);
    const [row] = await all<{ size: number | string; sealed: number | string }>(
      server.services.store.db,
      sql`SELECT size, sealed FROM files WHERE key = ${info.key}`,
    );
    expect([Number(row.size), Number(row.sealed)]).toEqual([sealedSize(text.length), 1]);
    const listed = {
      key: info.key,
      name: "secret.txt",
      type: "text/plain",
      size: text.length,
      sha256: info.sha256,
      createdAt: expect.any(String),
      omniUri: `svc://files/${ws}/${info.key}`,
      sealed: true,
      indexing: {
        status: "not_indexed",
        reason: "sealed",
        message: "stored sealed with your client key: its text is never read, as for encrypted notes",
      },
    };
    expect(info).toEqual(listed);
    expect(info.sha256).not.toBe(sha(Buffer.from(text)));
    expect(await server.call("GET", `/v1/workspaces/${ws}/files`)).toEqual([
      200,
      { files: [listed], nextCursor: null, hasMore: false },
    ]);

    const asStored = await download(ws, info.key);
    const sealed = Buffer.from(await asStored.arrayBuffer());
    expect([
      asStored.status,
      asStored.headers.get("content-type"),
      asStored.headers.get("etag"),
      sealed.length,
      sha(sealed),
    ]).toEqual([200, "application/vnd.mnemo.sealed-file", `"${info.sha256}"`, sealedSize(text.length), info.sha256]);
    expect(sealed.subarray(0, 8).toString()).toBe("MNEMOSF1");
    expect(sealed.includes(Buffer.from("vault code"))).toBe(false);

    const opened = await download(ws, info.key, opening());
    expect([
      opened.status,
      opened.headers.get("content-type"),
      opened.headers.get("etag"),
      await opened.text(),
    ]).toEqual([200, "text/plain", `"${info.sha256}-opened"`, text]);

    // A key that does not open it: the sealed bytes, counted as a decrypt error (as a note that does not open).
    const wrong = await download(ws, info.key, opening(OTHER));
    expect([
      wrong.status,
      wrong.headers.get("content-type"),
      wrong.headers.get("x-svc-decrypt-errors"),
      sha(Buffer.from(await wrong.arrayBuffer())),
    ]).toEqual([200, "application/vnd.mnemo.sealed-file", "1", info.sha256]);
    // Another user learns nothing of it, key or not.
    const bob = await download(ws, info.key, opening(), "mock-token-bob");
    expect([bob.status, await bob.json()]).toEqual([404, apiError("not_found", `workspace '${ws}' not found`)]);
  });

  test("the escrowed key seals and opens when no X-Client-Key is sent", async () => {
    const escrowed = randomBytes(32);
    await server.services.escrow.set("erin", escrowed);
    const token = "mock-token-erin";
    const ws = await createWorkspace(server, "Escrow", token);
    const [, issued] = await uploadUrl(ws, "e.txt", "text/plain", {}, token);
    const [status, info] = await put(issued.url, "escrow sealed", "text/plain", {});
    expect([status, info.sealed, info.size]).toEqual([201, true, "escrow sealed".length]);
    expect((await download(ws, issued.key, {}, token)).headers.get("content-type")).toBe(
      "application/vnd.mnemo.sealed-file",
    );
    const opened = await download(ws, issued.key, { "x-proxy-decrypt": "true" }, token);
    expect(await opened.text()).toBe("escrow sealed");
    const withHeader = await download(ws, issued.key, opening(escrowed.toString("base64")), token);
    expect(await withHeader.text()).toBe("escrow sealed");
  });

  test("a sealed file's text is not extracted or indexed", async () => {
    const ws = await createWorkspace(server, "Unindexed");
    const info = await uploadSealed(
      ws,
      "notes.md",
      "text/markdown",
      "# Harbour\n\nThe cormorant nests under the pier.",
    );
    const blocks = await all(
      server.services.store.db,
      sql`SELECT content FROM file_blocks WHERE file_key = ${info.key}`,
    );
    expect(blocks).toEqual([]);
    const [, found] = await server.call("POST", "/v1/documents/query", {
      body: { workspace_id: ws, query: "cormorant", include: { files: true, notes: false } },
    });
    expect(found.items).toEqual([]);
  });

  test("Range maps onto the sealed chunks: first bytes, across chunk and 1 MB row boundaries, a suffix; 416 past the end", async () => {
    const ws = await createWorkspace(server, "Ranges");
    const bytes = bytesOf(1024 * 1024 + 3 * SEALED_CHUNK_BYTES + 11);
    const { key, sha256 } = await uploadSealed(ws, "r.bin", "application/octet-stream", bytes);
    const size = bytes.length;
    const ranged = async (range: string) => {
      const response = await download(ws, key, { ...opening(), range });
      return {
        status: response.status,
        contentRange: response.headers.get("content-range"),
        body: new Uint8Array(await response.arrayBuffer()),
      };
    };
    const C = SEALED_CHUNK_BYTES;
    const MB = 1024 * 1024;
    expect(await ranged("bytes=0-9")).toEqual({
      status: 206,
      contentRange: `bytes 0-9/${size}`,
      body: bytes.slice(0, 10),
    });
    expect(await ranged(`bytes=${C - 5}-${C + 4}`)).toEqual({
      status: 206,
      contentRange: `bytes ${C - 5}-${C + 4}/${size}`,
      body: bytes.slice(C - 5, C + 5),
    });
    expect(await ranged(`bytes=${MB - 7}-${MB + 2 * C}`)).toEqual({
      status: 206,
      contentRange: `bytes ${MB - 7}-${MB + 2 * C}/${size}`,
      body: bytes.slice(MB - 7, MB + 2 * C + 1),
    });
    expect(await ranged("bytes=-5")).toEqual({
      status: 206,
      contentRange: `bytes ${size - 5}-${size - 1}/${size}`,
      body: bytes.slice(size - 5),
    });
    expect(await ranged(`bytes=${size - 1}-`)).toEqual({
      status: 206,
      contentRange: `bytes ${size - 1}-${size - 1}/${size}`,
      body: bytes.slice(size - 1),
    });
    const whole = await download(ws, key, opening());
    expect(sha(new Uint8Array(await whole.arrayBuffer()))).toBe(sha(bytes));
    const past = await download(ws, key, { ...opening(), range: `bytes=${size}-` });
    expect([past.status, await past.json()]).toEqual([
      416,
      apiError("invalid_request", `range: 'bytes=${size}-' is outside the file's ${size} bytes`),
    ]);
    // The plaintext has its own ETag: a cached copy is revalidated without sending it again.
    const cached = await download(ws, key, { ...opening(), "if-none-match": `"${sha256}-opened"` });
    expect([cached.status, await cached.text()]).toEqual([304, ""]);
  });

  test("MNEMO_MAX_FILE_BYTES counts the file's own bytes, not the sealed ones", async () => {
    const small = await startTestServer({
      env: { MNEMO_PROXY_ENCRYPTION: "1" },
      overrides: { files: { maxFileBytes: 1000 } },
    });
    try {
      const ws = await createWorkspace(small, "Small");
      const putTo = async (bytes: Uint8Array) => {
        const [, issued] = await small.call("POST", `/v1/workspaces/${ws}/files/upload-url`, {
          body: { filename: "b.bin", contentType: "application/octet-stream" },
          headers: { "x-client-key": KEY },
        });
        // Streamed, so no Content-Length is checked first: the limit applies while sealing.
        const body = new ReadableStream({
          start: (c) => {
            c.enqueue(bytes);
            c.close();
          },
        });
        return put(issued.url, body as unknown as Uint8Array, "application/octet-stream");
      };
      expect((await putTo(bytesOf(1000)))[0]).toBe(201);
      expect(await putTo(bytesOf(1001))).toEqual([
        413,
        apiError(
          "payload_too_large",
          "body: is larger than 1000 bytes, the largest file this server accepts (MNEMO_MAX_FILE_BYTES)",
        ),
      ]);
    } finally {
      await small.destroy();
    }
  });

  test("an empty file round-trips", async () => {
    const ws = await createWorkspace(server, "Empty");
    const info = await uploadSealed(ws, "empty.txt", "text/plain", "");
    expect([info.size, (info as { sealed?: boolean }).sealed]).toEqual([0, true]);
    const opened = await download(ws, info.key, opening());
    expect([opened.status, await opened.text()]).toEqual([200, ""]);
  });
});

describe("upload sessions in reverse-proxy mode", () => {
  const start = (ws: string, headers: Record<string, string> = { "x-client-key": KEY }) =>
    server.call("POST", "/v1/uploads/start", {
      body: { workspaceId: ws, filename: "joined.txt", contentType: "text/plain" },
      headers,
    });
  const part = (
    id: string,
    partNumber: number,
    text: string,
    headers: Record<string, string> = { "x-client-key": KEY },
  ) =>
    server.call("POST", `/v1/uploads/${id}/part`, {
      body: { partNumber, data: Buffer.from(text).toString("base64") },
      headers,
    });
  const complete = (id: string, headers: Record<string, string> = { "x-client-key": KEY }) =>
    server.call("POST", `/v1/uploads/${id}/complete`, { headers });

  test("every step needs the key; parts are sealed at rest; a wrong key at completion names the part; the file is sealed", async () => {
    const ws = await createWorkspace(server, "Sessions");
    expect(await start(ws, {})).toEqual([400, NO_KEY]);
    const [, { uploadId }] = await start(ws);
    expect(await part(uploadId, 1, "first half, ", {})).toEqual([
      400,
      apiError(
        "invalid_request",
        "X-Client-Key: this upload's parts are sealed with your client key; send X-Client-Key or escrow a client key",
      ),
    ]);
    expect(await part(uploadId, 2, "second half")).toEqual([200, { uploaded: true }]);
    expect(await part(uploadId, 1, "first half, ")).toEqual([200, { uploaded: true }]);
    const parts = await all<{ blob_id: string; size: number | string }>(
      server.services.store.db,
      sql`SELECT blob_id, size FROM upload_parts WHERE upload_id = ${uploadId}`,
    );
    for (const stored of parts) {
      const bytes = Buffer.from(
        await new Response(server.services.blobs.read(stored.blob_id, Number(stored.size))).arrayBuffer(),
      );
      expect([bytes.includes(Buffer.from("half")), plainSize(bytes.length) > 0]).toEqual([false, true]);
    }
    expect(await complete(uploadId, { "x-client-key": OTHER })).toEqual([
      400,
      apiError(
        "invalid_request",
        "X-Client-Key: part 1 does not open with this client key; send the key the parts were sent with",
      ),
    ]);
    const [status, done] = await complete(uploadId);
    expect(status).toBe(200);
    const [, list] = await server.call("GET", `/v1/workspaces/${ws}/files`);
    expect(list.files.map((f: { size: number; sealed?: boolean }) => [f.size, f.sealed])).toEqual([
      ["first half, second half".length, true],
    ]);
    const opened = await download(ws, done.key, opening());
    expect(await opened.text()).toBe("first half, second half");
  });
});

describe("the sealed format", () => {
  const seal = async (bytes: Uint8Array, key: Buffer, context: string) => {
    const pieces: Uint8Array[] = [];
    for await (const piece of sealStream([bytes], key, context)) pieces.push(piece);
    return Buffer.concat(pieces);
  };
  const reader = (sealed: Buffer) => (range: { start: number; end: number }) =>
    new Response(sealed.subarray(range.start, range.end)).body!;
  const open = async (sealed: Buffer, key: Buffer, context: string, range?: { start: number; end: number }) =>
    Buffer.from(
      await new Response(
        await openSealedRange(
          reader(sealed),
          sealed.length,
          key,
          context,
          range ?? { start: 0, end: plainSize(sealed.length) },
        ),
      ).arrayBuffer(),
    );
  const key = randomBytes(32);
  const plain = bytesOf(3 * SEALED_CHUNK_BYTES + 100, 9);
  const frame = SEALED_CHUNK_BYTES + 28;

  test("sizes: every plaintext size maps to one sealed size and back", () => {
    for (const n of [
      0,
      1,
      SEALED_CHUNK_BYTES - 1,
      SEALED_CHUNK_BYTES,
      SEALED_CHUNK_BYTES + 1,
      5 * SEALED_CHUNK_BYTES,
      100 * 1024 * 1024,
    ])
      expect(plainSize(sealedSize(n))).toBe(n);
    expect(() => plainSize(8 + 27)).toThrow();
  });

  test("chunks cannot be reordered, moved to another file, cut off or altered", async () => {
    const sealed = await seal(plain, key, "file:a");
    expect((await open(sealed, key, "file:a")).equals(Buffer.from(plain))).toBe(true);
    const chunk = (i: number) => sealed.subarray(8 + i * frame, 8 + (i + 1) * frame);
    const head = sealed.subarray(0, 8);
    const fails = async (bytes: Buffer, context = "file:a", range?: { start: number; end: number }) => {
      const error = await open(bytes, key, context, range).then(
        () => null,
        (e) => e,
      );
      expect(error).toBeInstanceOf(SealedFileError);
    };
    // Chunks 0 and 1 swapped.
    await fails(Buffer.concat([head, chunk(1), chunk(0), sealed.subarray(8 + 2 * frame)]));
    // The same bytes under another file's key.
    await fails(sealed, "file:b");
    // Chunk 1 of another file (same key, same plaintext) put in its place.
    const other = await seal(plain, key, "file:b");
    await fails(
      Buffer.concat([head, chunk(0), other.subarray(8 + frame, 8 + 2 * frame), sealed.subarray(8 + 2 * frame)]),
      "file:a",
      { start: SEALED_CHUNK_BYTES, end: SEALED_CHUNK_BYTES + 1 },
    );
    // Cut after a whole chunk: the new last chunk was not sealed as the last.
    await fails(sealed.subarray(0, 8 + 3 * frame));
    // One bit flipped.
    const flipped = Buffer.from(sealed);
    flipped[8 + frame + 40] ^= 1;
    await fails(flipped, "file:a", { start: SEALED_CHUNK_BYTES, end: SEALED_CHUNK_BYTES + 10 });
    // A fresh IV per chunk: the same plaintext seals differently every time.
    expect((await seal(plain, key, "file:a")).equals(sealed)).toBe(false);
  });
});

describe("export and import", () => {
  test("a file record carries the sealed flag; a record from before it imports as not sealed", () => {
    const spec = TABLE_BY_TYPE.get("file")!;
    const row = {
      owner_id: "u",
      workspace_id: "ws_1",
      key: "file_1",
      name: "n",
      content_type: "text/plain",
      size: 40,
      sha256: "ab",
      blob_id: "x",
      created_at: "t",
      updated_at: "t",
      sealed: 1,
    };
    const record = toRecord(spec, row);
    expect(record.sealed).toBe(1);
    expect(fromRecord(spec, record, "u")[spec.columns.indexOf("sealed")]).toBe(1);
    const { sealed: _, ...older } = record;
    expect(fromRecord(spec, older, "u")[spec.columns.indexOf("sealed")]).toBe(0);
  });
});
