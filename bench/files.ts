/**
 * `bun bench/files.ts [--mb 100]`: peak RSS of the server while a file of `--mb` MB is
 * uploaded through a presigned PUT, downloaded, and uploaded again as an upload session
 * (8 MB parts, base64 in JSON). The server runs in a child process on a temp data dir;
 * its peak is read from `/proc/<pid>/status` (VmHWM), reset before each phase through
 * `/proc/<pid>/clear_refs`, so each figure is the high-water mark of that phase alone.
 * The client streams the bytes (generated, never held whole) and discards the download.
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { cleanup, removeDir, startBenchServer, tempDir } from "./lib/harness";
import { statusKb } from "./lib/proc";
import { machineLine } from "./lib/machine";

const { values: args } = parseArgs({ options: { mb: { type: "string", default: "100" } } });
const MB = 1024 * 1024;
const size = Number(args.mb) * MB;
const headers = { authorization: "Bearer mock-token-bench" };

const resetPeak = (pid: number) => writeFileSync(`/proc/${pid}/clear_refs`, "5");
const mib = (kib: number) => `${(kib / 1024).toFixed(0)} MB`;

/** `size` bytes in 1 MB chunks, made as they are read. */
function generated(total: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream(
    {
      pull(controller) {
        if (sent >= total) return controller.close();
        const chunk = new Uint8Array(Math.min(MB, total - sent)).fill((sent / MB) & 0xff);
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    },
    { highWaterMark: 1 },
  );
}

async function measure<T>(pid: number, phase: () => Promise<T>): Promise<{ result: T; peakKb: number; ms: number }> {
  resetPeak(pid);
  const started = performance.now();
  const result = await phase();
  return { result, peakKb: statusKb(pid, "VmHWM"), ms: performance.now() - started };
}

const dataDir = tempDir("mnemo-bench-files-");
const server = await startBenchServer({
  dataDir,
  env: { EMBEDDINGS_PROVIDER: "none", MNEMO_MAX_FILE_BYTES: String(size + MB) },
});
try {
  const pid = Number(/pid (\d+)/.exec(server.where)?.[1]);
  if (!pid) throw new Error(`no server pid in '${server.where}'`);
  const call = (method: string, path: string, body?: unknown) =>
    fetch(server.url + path, {
      method,
      headers: { ...headers, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then((r) => r.json() as Promise<any>);
  const ws = (await call("POST", "/v1/workspaces", { name: "bench" })).id;
  // Warm up: the blob store's first table and the routes.
  const warm = await call("POST", `/v1/workspaces/${ws}/files/upload-url`, {
    filename: "warm.bin",
    contentType: "application/octet-stream",
  });
  await fetch(warm.url, {
    method: "PUT",
    body: generated(2 * MB),
    headers: { "content-type": "application/octet-stream" },
  });
  await Bun.sleep(500);
  Bun.gc(true);
  const idleKb = statusKb(pid, "VmRSS");

  const issued = await call("POST", `/v1/workspaces/${ws}/files/upload-url`, {
    filename: "big.bin",
    contentType: "application/octet-stream",
  });
  const upload = await measure(pid, async () => {
    const response = await fetch(issued.url, {
      method: "PUT",
      body: generated(size),
      headers: { "content-type": "application/octet-stream" },
    });
    if (response.status !== 201) throw new Error(`PUT: ${response.status} ${await response.text()}`);
    return response.json() as Promise<{ size: number }>;
  });
  const download = await measure(pid, async () => {
    const response = await fetch(`${server.url}/v1/workspaces/${ws}/files/${issued.key}`, { headers });
    let received = 0;
    for await (const chunk of response.body!) received += chunk.byteLength;
    return received;
  });
  const session = await measure(pid, async () => {
    const { uploadId } = await call("POST", "/v1/uploads/start", {
      workspaceId: ws,
      filename: "parts.bin",
      contentType: "application/octet-stream",
    });
    for (let part = 1, sent = 0; sent < size; part++) {
      const bytes = Buffer.alloc(Math.min(8 * MB, size - sent), part);
      sent += bytes.length;
      await call("POST", `/v1/uploads/${uploadId}/part`, { partNumber: part, data: bytes.toString("base64") });
    }
    return call("POST", `/v1/uploads/${uploadId}/complete`);
  });
  if (upload.result.size !== size || download.result !== size || !session.result.completed)
    throw new Error("a transfer came back incomplete");

  console.log(`files: ${args.mb} MB; ${machineLine()}`);
  console.log(`server (${server.where}) RSS at idle after warm-up: ${mib(idleKb)}`);
  console.log(
    `presigned PUT   : peak RSS ${mib(upload.peakKb)} (+${mib(upload.peakKb - idleKb)} over idle), ${(upload.ms / 1000).toFixed(1)} s`,
  );
  console.log(
    `download (GET)  : peak RSS ${mib(download.peakKb)} (+${mib(download.peakKb - idleKb)} over idle), ${(download.ms / 1000).toFixed(1)} s`,
  );
  console.log(
    `upload session  : peak RSS ${mib(session.peakKb)} (+${mib(session.peakKb - idleKb)} over idle), ${(session.ms / 1000).toFixed(1)} s (8 MB parts as base64 JSON)`,
  );
} finally {
  await server.stop();
  removeDir(dataDir);
  cleanup();
}
