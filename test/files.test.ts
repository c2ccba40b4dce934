import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { serverSecret } from "../src/db/secrets";
import { encryptString } from "../src/crypto/aes-gcm";
import { createPresigner } from "../src/files/presign";
import { startTestServer, type TestServer } from "./helpers/server";
import { apiError, createWorkspace } from "./helpers/workspaces";
import { waitFor } from "./helpers/wait";

const server = await startTestServer();
const small = await startTestServer({ overrides: { files: { maxFileBytes: 1024 } } });
afterAll(async () => {
  await server.destroy();
  await small.destroy();
});

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const bytesOf = (n: number, seed = 7) => {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
};

async function uploadUrl(s: TestServer, ws: string, filename: string, contentType: string, token?: string) {
  const [status, body] = await s.call("POST", `/v1/workspaces/${ws}/files/upload-url`, {
    body: { filename, contentType },
    token,
  });
  if (status !== 200) throw new Error(`upload-url: ${status} ${JSON.stringify(body)}`);
  return body as { url: string; key: string; method: string; omniUri: string; expiresAt: string };
}

const put = (
  url: string,
  body: ConstructorParameters<typeof Response>[0],
  contentType: string,
  headers: Record<string, string> = {},
) =>
  fetch(url, { method: "PUT", body, headers: { "content-type": contentType, ...headers } }).then(
    async (r) => [r.status, await r.json()] as [number, any],
  );

/** Uploads through a presigned URL and returns the key. */
async function upload(
  s: TestServer,
  ws: string,
  filename: string,
  contentType: string,
  bytes: Uint8Array | string,
  token?: string,
) {
  const { url, key } = await uploadUrl(s, ws, filename, contentType, token);
  const [status, body] = await put(url, bytes, contentType);
  if (status !== 201) throw new Error(`PUT: ${status} ${JSON.stringify(body)}`);
  return key;
}

const download = (
  s: TestServer,
  ws: string,
  key: string,
  headers: Record<string, string> = {},
  token = "mock-token-alice",
) => fetch(`${s.url}/v1/workspaces/${ws}/files/${key}`, { headers: { authorization: `Bearer ${token}`, ...headers } });

describe("presigned uploads", () => {
  test("upload-url → PUT without a bearer → download with the stored type; listed with name, type, size, sha256", async () => {
    const ws = await createWorkspace(server, "Files");
    const issued = await uploadUrl(server, ws, "notes.bin", "application/octet-stream");
    expect(issued).toEqual({
      url: expect.stringMatching(
        new RegExp(`^${server.url}/v1/workspaces/${ws}/files/${issued.key}\\?expires=\\d+&signature=[\\w-]+$`),
      ),
      key: expect.stringMatching(/^file_[0-9A-Z]{26}$/),
      method: "PUT",
      omniUri: `svc://files/${ws}/${issued.key}`,
      expiresAt: expect.any(String),
    });
    const bytes = bytesOf(3 * 1024 * 1024 + 17);
    const [status, info] = await put(issued.url, bytes, "application/octet-stream");
    const stored = {
      key: issued.key,
      name: "notes.bin",
      type: "application/octet-stream",
      size: bytes.length,
      sha256: sha(bytes),
      createdAt: expect.any(String),
      omniUri: issued.omniUri,
      indexing: { status: "not_indexed", reason: "type", message: "files of this type carry no text Mnemo reads" },
    };
    expect({ status, info }).toEqual({ status: 201, info: stored });

    const response = await download(server, ws, issued.key);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/octet-stream");
    expect(response.headers.get("accept-ranges")).toBe("bytes");
    expect(sha(new Uint8Array(await response.arrayBuffer()))).toBe(sha(bytes));

    expect(await server.call("GET", `/v1/workspaces/${ws}/files`)).toEqual([
      200,
      { files: [stored], nextCursor: null, hasMore: false },
    ]);
  });

  test("a tampered, expired or re-typed URL is 403; no signature is 403", async () => {
    const ws = await createWorkspace(server, "Tamper");
    const { url, key } = await uploadUrl(server, ws, "a.txt", "text/plain");
    const parsed = new URL(url);
    const sig = parsed.searchParams.get("signature")!;
    const expires = Number(parsed.searchParams.get("expires"));
    const withParams = (params: Record<string, string>) => {
      const copy = new URL(url);
      for (const [k, v] of Object.entries(params)) copy.searchParams.set(k, v);
      return copy.toString();
    };
    const forbidden = (message: string): [number, unknown] => [403, apiError("forbidden", message)];
    const mismatch =
      "signature: does not match this URL and content type (the Content-Type header must be the one the URL was issued for)";
    expect(
      await put(withParams({ signature: sig.slice(0, -2) + (sig.endsWith("AA") ? "BB" : "AA") }), "x", "text/plain"),
    ).toEqual(forbidden(mismatch));
    expect(await put(withParams({ expires: String(expires + 3600) }), "x", "text/plain")).toEqual(forbidden(mismatch));
    expect(await put(url, "x", "text/html")).toEqual(forbidden(mismatch));
    expect(await put(url.replace(key, `${key}X`), "x", "text/plain")).toEqual(forbidden(mismatch));
    expect(await put(`${server.url}/v1/workspaces/${ws}/files/${key}`, "x", "text/plain")).toEqual(
      forbidden("signature: missing; upload with the URL from files/upload-url"),
    );
    // A correctly signed URL whose time has passed (signed with the server's own secret).
    const presigner = createPresigner(await serverSecret(server.services.store, "presign"));
    const past = Math.floor(Date.now() / 1000) - 1;
    const expired = withParams({
      expires: String(past),
      signature: presigner.sign({ method: "PUT", workspaceId: ws, key, contentType: "text/plain", expires: past }),
    });
    expect(await put(expired, "x", "text/plain")).toEqual(
      forbidden("signature: the upload URL has expired; ask files/upload-url for a new one"),
    );
    // Parameters of the content type are normalized, not compared as text.
    expect((await put(url, "ok", "Text/Plain"))[0]).toBe(201);
    expect(await server.call("GET", `/v1/workspaces/${ws}/files`).then(([, body]) => body.files.length)).toBe(1);
  });

  test("a body over MNEMO_MAX_FILE_BYTES is 413, declared or streamed; nothing is stored", async () => {
    const ws = await createWorkspace(small, "Big");
    const tooBig = apiError(
      "payload_too_large",
      "body: is larger than 1 KB, the largest file this server accepts (MNEMO_MAX_FILE_BYTES)",
    );
    const declared = await uploadUrl(small, ws, "big.bin", "application/octet-stream");
    expect(await put(declared.url, bytesOf(1025), "application/octet-stream")).toEqual([413, tooBig]);
    const streamed = await uploadUrl(small, ws, "big.bin", "application/octet-stream");
    const body = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 4; i++) controller.enqueue(bytesOf(400, i));
        controller.close();
      },
    });
    expect(await put(streamed.url, body, "application/octet-stream")).toEqual([413, tooBig]);
    expect(await small.call("GET", `/v1/workspaces/${ws}/files`)).toEqual([
      200,
      { files: [], nextCursor: null, hasMore: false },
    ]);
    expect(await small.services.blobs.list()).toEqual([]);
    const exact = await uploadUrl(small, ws, "exact.bin", "application/octet-stream");
    expect((await put(exact.url, bytesOf(1024), "application/octet-stream"))[0]).toBe(201);
  });

  test("a file above the 32 MB JSON body limit streams through", async () => {
    const ws = await createWorkspace(server, "Large");
    const bytes = bytesOf(33 * 1024 * 1024 + 5, 3);
    const key = await upload(server, ws, "large.bin", "application/octet-stream", bytes);
    const response = await download(server, ws, key);
    // Bun sends a streamed body chunked (it drops Content-Length once the stream has to wait).
    const received = new Uint8Array(await response.arrayBuffer());
    expect([received.length, sha(received)]).toEqual([bytes.length, sha(bytes)]);
  });
});

describe("download, list, delete", () => {
  test("Range: first bytes, an open end, a suffix, across a 1 MB row boundary; unsatisfiable is 416", async () => {
    const ws = await createWorkspace(server, "Range");
    const bytes = bytesOf(2.5 * 1024 * 1024, 11);
    const key = await upload(server, ws, "r.bin", "application/octet-stream", bytes);
    const ranged = async (range: string) => {
      const response = await download(server, ws, key, { range });
      return {
        status: response.status,
        contentRange: response.headers.get("content-range"),
        body: new Uint8Array(await response.arrayBuffer()),
      };
    };
    const size = bytes.length;
    const MB = 1024 * 1024;
    expect(await ranged("bytes=0-9")).toEqual({
      status: 206,
      contentRange: `bytes 0-9/${size}`,
      body: bytes.slice(0, 10),
    });
    expect(await ranged(`bytes=${size - 4}-`)).toEqual({
      status: 206,
      contentRange: `bytes ${size - 4}-${size - 1}/${size}`,
      body: bytes.slice(size - 4),
    });
    expect(await ranged("bytes=-5")).toEqual({
      status: 206,
      contentRange: `bytes ${size - 5}-${size - 1}/${size}`,
      body: bytes.slice(size - 5),
    });
    expect(await ranged(`bytes=${MB - 3}-${2 * MB + 2}`)).toEqual({
      status: 206,
      contentRange: `bytes ${MB - 3}-${2 * MB + 2}/${size}`,
      body: bytes.slice(MB - 3, 2 * MB + 3),
    });
    const unsatisfiable = await download(server, ws, key, { range: `bytes=${size}-` });
    expect([unsatisfiable.status, unsatisfiable.headers.get("content-range"), await unsatisfiable.json()]).toEqual([
      416,
      `bytes */${size}`,
      apiError("invalid_request", `range: 'bytes=${size}-' is outside the file's ${size} bytes`),
    ]);
  });

  test("list pages with a cursor, oldest first", async () => {
    const ws = await createWorkspace(server, "Pages");
    const keys = [];
    for (const name of ["one.txt", "two.txt", "three.txt"])
      keys.push(await upload(server, ws, name, "text/plain", name));
    const [, first] = await server.call("GET", `/v1/workspaces/${ws}/files?limit=2`);
    expect(first.files.map((f: { name: string }) => f.name)).toEqual(["one.txt", "two.txt"]);
    expect(first.hasMore).toBe(true);
    const [, second] = await server.call("GET", `/v1/workspaces/${ws}/files?limit=2&cursor=${first.nextCursor}`);
    expect([second.files.map((f: { key: string }) => f.key), second.hasMore, second.nextCursor]).toEqual([
      [keys[2]],
      false,
      null,
    ]);
    expect(
      await server
        .call("GET", `/v1/workspaces/${ws}/files?cursor=${first.nextCursor}`, { token: "mock-token-bob" })
        .then(([s]) => s),
    ).toBe(404);
  });

  test("delete removes the file and its blob; a second delete is 404", async () => {
    const ws = await createWorkspace(server, "Delete");
    const key = await upload(server, ws, "gone.bin", "application/octet-stream", bytesOf(100));
    const [, list] = await server.call("GET", `/v1/workspaces/${ws}/files`);
    expect(list.files).toHaveLength(1);
    const blobsBefore = (await server.services.blobs.list()).length;
    expect(await server.call("DELETE", `/v1/workspaces/${ws}/files/${key}`)).toEqual([200, { deleted: true, key }]);
    expect((await server.services.blobs.list()).length).toBe(blobsBefore - 1);
    expect(await server.call("GET", `/v1/workspaces/${ws}/files/${key}`)).toEqual([
      404,
      apiError("not_found", `file '${key}' not found`),
    ]);
    expect(await server.call("DELETE", `/v1/workspaces/${ws}/files/${key}`)).toEqual([
      404,
      apiError("not_found", `file '${key}' not found`),
    ]);
  });
});

describe("isolation", () => {
  test("another user gets 404 for the workspace, its files and keys, and cannot delete them", async () => {
    const ws = await createWorkspace(server, "Alice's");
    const key = await upload(server, ws, "secret.txt", "text/plain", "alice only");
    const bob = "mock-token-bob";
    const bobWs = await createWorkspace(server, "Bob's", bob);
    const wsMissing: [number, unknown] = [404, apiError("not_found", `workspace '${ws}' not found`)];
    expect(await server.call("GET", `/v1/workspaces/${ws}/files`, { token: bob })).toEqual(wsMissing);
    expect(await server.call("GET", `/v1/workspaces/${ws}/files/${key}`, { token: bob })).toEqual(wsMissing);
    expect(await server.call("DELETE", `/v1/workspaces/${ws}/files/${key}`, { token: bob })).toEqual(wsMissing);
    expect(
      await server.call("POST", `/v1/workspaces/${ws}/files/upload-url`, {
        token: bob,
        body: { filename: "x", contentType: "text/plain" },
      }),
    ).toEqual(wsMissing);
    // Alice's key under Bob's own workspace finds nothing either.
    const keyMissing: [number, unknown] = [404, apiError("not_found", `file '${key}' not found`)];
    expect(await server.call("GET", `/v1/workspaces/${bobWs}/files/${key}`, { token: bob })).toEqual(keyMissing);
    expect(await server.call("DELETE", `/v1/workspaces/${bobWs}/files/${key}`, { token: bob })).toEqual(keyMissing);
    // A URL issued to Bob cannot be pointed at Alice's workspace or key.
    const bobs = await uploadUrl(server, bobWs, "b.txt", "text/plain", bob);
    const forged = new URL(bobs.url.replace(bobWs, ws).replace(bobs.key, key));
    expect((await put(forged.toString(), "overwrite", "text/plain"))[0]).toBe(403);
    expect(await (await download(server, ws, key)).text()).toBe("alice only");
    expect(await server.call("GET", `/v1/workspaces/${ws}/files`, { token: null }).then(([s]) => s)).toBe(401);
  });
});

describe("the scheduled sweep of orphaned bytes", () => {
  test("removes bytes no file points at once they are old enough, on its own timer, and leaves every file's bytes", async () => {
    const sweeping = await startTestServer({ env: { MNEMO_BLOB_SWEEP_MS: "100", MNEMO_BLOB_ORPHAN_AGE_MS: "1500" } });
    try {
      const ws = await createWorkspace(sweeping, "Sweep");
      const kept = await upload(sweeping, ws, "kept.txt", "text/plain", "bytes a file points at");
      // Bytes written with no row pointing at them (a crash before the commit).
      const orphan = await sweeping.services.blobs.write([new Uint8Array([4, 5, 6])]);
      expect(await sweeping.services.blobs.exists(orphan.blobId)).toBe(true);
      await waitFor(async () => !(await sweeping.services.blobs.exists(orphan.blobId)), {
        what: "the sweep to remove the orphaned bytes",
        everyMs: 50,
      });
      expect(await (await download(sweeping, ws, kept)).text()).toBe("bytes a file points at");
    } finally {
      await sweeping.destroy();
    }
  }, 30_000);
});

describe("one upload per URL, and sweeping", () => {
  test("a second PUT to the same URL is 409 and changes nothing; after DELETE a replay does not bring the file back", async () => {
    const ws = await createWorkspace(server, "Replay");
    const { url, key } = await uploadUrl(server, ws, "v.txt", "text/plain");
    expect((await put(url, "first version", "text/plain"))[0]).toBe(201);
    const blobs = (await server.services.blobs.list()).length;
    const used: [number, unknown] = [
      409,
      apiError(
        "conflict",
        "signature: this upload URL was already used (a URL is good for one upload); ask files/upload-url for a new one",
      ),
    ];
    expect(await put(url, "second version", "text/plain")).toEqual(used);
    expect((await server.services.blobs.list()).length).toBe(blobs);
    expect(await (await download(server, ws, key)).text()).toBe("first version");

    expect(await server.call("DELETE", `/v1/workspaces/${ws}/files/${key}`)).toEqual([200, { deleted: true, key }]);
    expect(await put(url, "brought back", "text/plain")).toEqual(used);
    expect(await server.call("GET", `/v1/workspaces/${ws}/files/${key}`)).toEqual([
      404,
      apiError("not_found", `file '${key}' not found`),
    ]);
    expect(await server.call("GET", `/v1/workspaces/${ws}/files`)).toEqual([
      200,
      { files: [], nextCursor: null, hasMore: false },
    ]);
  });

  test("two PUTs to one URL at once store one file; the other is 409 and leaves no bytes behind", async () => {
    const ws = await createWorkspace(server, "Race");
    const { url, key } = await uploadUrl(server, ws, "r.bin", "application/octet-stream");
    const blobs = (await server.services.blobs.list()).length;
    const results = await Promise.all([
      put(url, bytesOf(300_000, 1), "application/octet-stream"),
      put(url, bytesOf(300_000, 2), "application/octet-stream"),
    ]);
    expect(results.map(([status]) => status).sort()).toEqual([201, 409]);
    const winner = results.find(([status]) => status === 201)![1];
    expect(sha(new Uint8Array(await (await download(server, ws, key)).arrayBuffer()))).toBe(winner.sha256);
    expect((await server.services.blobs.list()).length).toBe(blobs + 1);
  });

  test("orphan blobs are swept once old", async () => {
    const ws = await createWorkspace(server, "Orphans");
    const key = await upload(server, ws, "kept.txt", "text/plain", "kept");
    // Bytes written with no row pointing at them (a crash before the commit).
    const orphan = await server.services.blobs.write([new Uint8Array([1, 2, 3])]);
    expect(await server.services.files.sweepOrphanBlobs()).toEqual([]);
    expect(await server.services.files.sweepOrphanBlobs(0)).toEqual([orphan.blobId]);
    expect(await server.services.blobs.exists(orphan.blobId)).toBe(false);
    expect(await (await download(server, ws, key)).text()).toBe("kept");
  });
});

describe("encrypted file names", () => {
  test("a name the client stored encrypted is listed as stored, and opened with X-Proxy-Decrypt and the key", async () => {
    const ws = await createWorkspace(server, "Sealed names");
    const key = Buffer.alloc(32, 3);
    const sealedName = encryptString("tax-return-2026.txt", key);
    await upload(server, ws, sealedName, "text/plain", "numbers");
    const [, stored] = await server.call("GET", `/v1/workspaces/${ws}/files`);
    expect(stored.files.map((f: { name: string }) => f.name)).toEqual([sealedName]);
    const [, opened] = await server.call("GET", `/v1/workspaces/${ws}/files`, {
      headers: { "x-proxy-decrypt": "true", "x-client-key": key.toString("hex") },
    });
    expect(opened.files.map((f: { name: string }) => f.name)).toEqual(["tax-return-2026.txt"]);
    const wrong = await fetch(`${server.url}/v1/workspaces/${ws}/files`, {
      headers: {
        authorization: "Bearer mock-token-alice",
        "x-proxy-decrypt": "true",
        "x-client-key": Buffer.alloc(32, 4).toString("hex"),
      },
    });
    expect([wrong.headers.get("x-svc-decrypt-errors"), ((await wrong.json()) as any).files[0].name]).toEqual([
      "1",
      sealedName,
    ]);
  });
});
