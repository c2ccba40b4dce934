import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { run, sql } from "../src/db/store";
import { startTestServer } from "./helpers/server";
import { apiError, createWorkspace } from "./helpers/workspaces";

const server = await startTestServer();
const small = await startTestServer({ overrides: { files: { maxFileBytes: 1000 } } });
afterAll(async () => {
  await server.destroy();
  await small.destroy();
});

const b64 = (bytes: Uint8Array | string) => Buffer.from(bytes).toString("base64");
const bytesOf = (n: number, seed: number) => new Uint8Array(n).map((_, i) => (i * 13 + seed) & 0xff);
const start = (ws: string, token?: string, s = server) =>
  s.call("POST", "/v1/uploads/start", {
    body: { workspaceId: ws, filename: "big.bin", contentType: "application/octet-stream" },
    token,
  });
const part = (id: string, partNumber: number, data: string, token?: string, s = server) =>
  s.call("POST", `/v1/uploads/${id}/part`, { body: { partNumber, data }, token });
const complete = (id: string, token?: string, s = server) => s.call("POST", `/v1/uploads/${id}/complete`, { token });

describe("upload sessions", () => {
  test("parts in any order, a re-sent part replaces the first; complete joins them in order into a file", async () => {
    const ws = await createWorkspace(server, "Uploads");
    const [status, started] = await start(ws);
    expect({ status, started }).toEqual({ status: 200, started: { uploadId: expect.stringMatching(/^upl_/) } });
    const id = started.uploadId;
    const parts = [bytesOf(2 * 1024 * 1024 + 3, 1), bytesOf(1024 * 1024, 2), bytesOf(10, 3)];
    expect(await part(id, 3, b64(parts[2]))).toEqual([200, { uploaded: true }]);
    expect(await part(id, 2, b64("wrong bytes, replaced below"))).toEqual([200, { uploaded: true }]);
    expect(await part(id, 1, b64(parts[0]))).toEqual([200, { uploaded: true }]);
    expect(await part(id, 2, b64(parts[1]))).toEqual([200, { uploaded: true }]);
    const [done, result] = await complete(id);
    expect({ done, result }).toEqual({ done: 200, result: { key: expect.stringMatching(/^file_/), completed: true } });

    const whole = Buffer.concat(parts);
    const [, list] = await server.call("GET", `/v1/workspaces/${ws}/files`);
    expect(list.files).toEqual([
      {
        key: result.key,
        name: "big.bin",
        type: "application/octet-stream",
        size: whole.length,
        sha256: createHash("sha256").update(whole).digest("hex"),
        createdAt: expect.any(String),
        omniUri: `svc://files/${ws}/${result.key}`,
        indexing: { status: "not_indexed", reason: "type", message: "files of this type carry no text Mnemo reads" },
      },
    ]);
    const response = await fetch(`${server.url}/v1/workspaces/${ws}/files/${result.key}`, {
      headers: { authorization: "Bearer mock-token-alice" },
    });
    expect(Buffer.compare(Buffer.from(await response.arrayBuffer()), whole)).toBe(0);
    // The session and its part blobs are gone; only the file's blob stays.
    expect(await complete(id)).toEqual([404, apiError("not_found", `upload '${id}' not found`)]);
  });

  test("the orphan-blob sweep leaves the parts of an open session, whatever their age; the completed file keeps its bytes", async () => {
    const ws = await createWorkspace(server, "Sweep parts");
    const id = (await start(ws))[1].uploadId;
    expect(await part(id, 1, b64("first part "))).toEqual([200, { uploaded: true }]);
    expect(await part(id, 2, b64("second part"))).toEqual([200, { uploaded: true }]);
    // Age 0: every blob nothing points at would go.
    expect(await server.services.files.sweepOrphanBlobs(0)).toEqual([]);
    const [done, result] = await complete(id);
    expect(done).toBe(200);
    expect(await server.services.files.sweepOrphanBlobs(0)).toEqual([]);
    const response = await fetch(`${server.url}/v1/workspaces/${ws}/files/${result.key}`, {
      headers: { authorization: "Bearer mock-token-alice" },
    });
    expect(await response.text()).toBe("first part second part");
  });

  test("a gap is a 400 naming the missing part; no parts is a 400; part numbers are 1…10,000", async () => {
    const ws = await createWorkspace(server, "Gaps");
    const [, { uploadId }] = await start(ws);
    expect(await complete(uploadId)).toEqual([
      400,
      apiError("invalid_request", "partNumber: no parts were uploaded; send part 1 first"),
    ]);
    await part(uploadId, 1, b64("a"));
    await part(uploadId, 3, b64("c"));
    await part(uploadId, 4, b64("d"));
    expect(await complete(uploadId)).toEqual([
      400,
      apiError("invalid_request", "partNumber: part 2 is missing (parts must be numbered 1, 2, 3, … without gaps)"),
    ]);
    const outOfRange: [number, unknown] = [
      400,
      apiError("invalid_request", "partNumber: must be an integer from 1 to 10000"),
    ];
    for (const partNumber of [0, 10_001, 1.5, -3])
      expect(await part(uploadId, partNumber, b64("x"))).toEqual(outOfRange);
    expect(
      await server.call("POST", `/v1/uploads/${uploadId}/part`, { body: { partNumber: "two", data: b64("x") } }),
    ).toEqual([400, apiError("invalid_request", "partNumber: expected number")]);
    expect(await part(uploadId, 5, "not base64!")).toEqual([
      400,
      apiError("invalid_request", "data: must be base64 (standard or URL-safe alphabet)"),
    ]);
    await part(uploadId, 2, b64("b"));
    const [, { key }] = await complete(uploadId);
    const response = await fetch(`${server.url}/v1/workspaces/${ws}/files/${key}`, {
      headers: { authorization: "Bearer mock-token-alice" },
    });
    expect(await response.text()).toBe("abcd");
  });

  test("a part over 8 MB is 413; the whole upload is capped at MNEMO_MAX_FILE_BYTES", async () => {
    const ws = await createWorkspace(server, "Caps");
    const [, { uploadId }] = await start(ws);
    expect(await part(uploadId, 1, b64(new Uint8Array(8 * 1024 * 1024 + 1)))).toEqual([
      413,
      apiError("payload_too_large", "data: a part holds at most 8 MB (decoded)"),
    ]);
    const smallWs = await createWorkspace(small, "Small");
    const [, capped] = await start(smallWs, undefined, small);
    expect(await part(capped.uploadId, 1, b64(new Uint8Array(600)), undefined, small)).toEqual([
      200,
      { uploaded: true },
    ]);
    expect(await part(capped.uploadId, 2, b64(new Uint8Array(600)), undefined, small)).toEqual([
      413,
      apiError("payload_too_large", "data: the upload would exceed 1000 bytes (MNEMO_MAX_FILE_BYTES)"),
    ]);
    // Replacing part 1 with a smaller one makes room.
    expect((await part(capped.uploadId, 1, b64(new Uint8Array(300)), undefined, small))[0]).toBe(200);
    expect((await part(capped.uploadId, 2, b64(new Uint8Array(600)), undefined, small))[0]).toBe(200);
    expect((await complete(capped.uploadId, undefined, small))[0]).toBe(200);
  });

  test("at most 20 open sessions per user; an idle session expires after an hour and frees its slot", async () => {
    const ws = await createWorkspace(server, "Many", "mock-token-carol");
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await start(ws, "mock-token-carol"))[1].uploadId);
    const [status, body] = await start(ws, "mock-token-carol");
    expect({ status, body }).toEqual({
      status: 429,
      body: apiError(
        "rate_limited",
        "uploads: at most 20 open upload sessions per user; complete one or let it expire (1 hour idle)",
      ),
    });
    await part(ids[0], 1, b64("soon idle"), "mock-token-carol");
    // An hour passes for the first session (its last touch moved back).
    await run(
      server.services.store.db,
      sql`UPDATE upload_sessions SET touched_at = ${Date.now() - 3_600_001} WHERE id = ${ids[0]}`,
    );
    expect(await part(ids[0], 2, b64("late"), "mock-token-carol")).toEqual([
      404,
      apiError("not_found", `upload '${ids[0]}' expired after an hour without parts`),
    ]);
    expect((await start(ws, "mock-token-carol"))[0]).toBe(200);
  });

  test("auth: a bearer with files:write; another user's session is 404 and cannot be completed", async () => {
    const ws = await createWorkspace(server, "Mine");
    expect((await start(ws, null as unknown as string))[0]).toBe(401);
    const [, { uploadId }] = await start(ws);
    await part(uploadId, 1, b64("alice's bytes"));
    const bob = "mock-token-bob";
    const missing: [number, unknown] = [404, apiError("not_found", `upload '${uploadId}' not found`)];
    expect(await part(uploadId, 1, b64("bob's bytes"), bob)).toEqual(missing);
    expect(await complete(uploadId, bob)).toEqual(missing);
    expect(await start(ws, bob)).toEqual([404, apiError("not_found", `workspace '${ws}' not found`)]);
    expect((await server.call("POST", `/v1/uploads/${uploadId}/complete`, { token: null }))[0]).toBe(401);
    // A key of the same user without files:write may not upload.
    const readOnly = (
      await server.services.credentials.createApiKey({ userId: "alice", scopes: ["memory:read", "memory:write"] })
    ).key;
    expect((await start(ws, readOnly))[0]).toBe(403);
    expect((await part(uploadId, 1, b64("x"), readOnly))[0]).toBe(403);
    expect(
      (
        await server.call("POST", `/v1/workspaces/${ws}/files/upload-url`, {
          token: readOnly,
          body: { filename: "x", contentType: "text/plain" },
        })
      )[0],
    ).toBe(403);
    const filesKey = (await server.services.credentials.createApiKey({ userId: "alice", scopes: ["files:write"] })).key;
    expect(
      (
        await server.call("POST", `/v1/workspaces/${ws}/files/upload-url`, {
          token: filesKey,
          body: { filename: "x", contentType: "text/plain" },
        })
      )[0],
    ).toBe(200);
    const [, { key }] = await complete(uploadId);
    const response = await fetch(`${server.url}/v1/workspaces/${ws}/files/${key}`, {
      headers: { authorization: "Bearer mock-token-alice" },
    });
    expect(await response.text()).toBe("alice's bytes");
  });
});
