/**
 * `bun bench/pdf-bomb.ts [--checkout DIR] [--inflated-mb 20]`: what a PDF decompression bomb
 * costs a running server (docs/performance.md#pdf-text-extraction). Starts `mnemo serve` from DIR (default this
 * checkout; point it at another to compare builds) as a process of its own on a temp data
 * dir, warms it with one small PDF, then uploads the bomb with a presigned PUT and prints:
 * the PUT's time, the time until the file's text is settled (its `indexing` leaves
 * `pending`; a build without that field settles with the PUT) and, when indexed, found,
 * the server's RSS when idle, its peak meanwhile (VmHWM, reset after idle) and after.
 */
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { pdfBomb, textPdf } from "../test/helpers/pdf";
import { cleanup, tempDir, trackChild } from "./lib/harness";
import { machineLine } from "./lib/machine";
import { statusKb } from "./lib/proc";

const { values: args } = parseArgs({
  options: {
    checkout: { type: "string", default: resolve(import.meta.dir, "..") },
    "inflated-mb": { type: "string", default: "20" },
  },
});
const inflatedMb = Number(args["inflated-mb"]);
if (!(inflatedMb > 0)) throw new Error("--inflated-mb must be a positive number");

const dataDir = tempDir("mnemo-pdf-bomb-");
const proc = Bun.spawn(
  [
    process.execPath,
    join(args.checkout!, "cli", "mnemo.ts"),
    "serve",
    "--port",
    "0",
    "--data",
    dataDir,
    "--allow-mock-tokens",
  ],
  {
    cwd: args.checkout,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      EMBEDDINGS_PROVIDER: "none",
      MNEMO_LOG_LEVEL: "warn",
    },
    stdout: "pipe",
    stderr: "inherit",
  },
);
trackChild(proc);
let out = "";
const reader = proc.stdout.getReader();
while (!/listening on (\S+)/.test(out)) {
  const { value, done } = await reader.read();
  if (done) throw new Error("the server exited before listening");
  out += new TextDecoder().decode(value);
}
const url = /listening on (\S+)/.exec(out)![1];
const mb = (kb: number) => Math.round(kb / 1024);

async function call(method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(url + path, {
    method,
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: { authorization: "Bearer mock-token-bench", "content-type": "application/json" },
  });
  return response.json();
}
async function upload(ws: string, name: string, bytes: Uint8Array): Promise<{ key: string; putMs: number }> {
  const issued = await call("POST", `/v1/workspaces/${ws}/files/upload-url`, {
    filename: name,
    contentType: "application/pdf",
  });
  const started = performance.now();
  const put = await fetch(issued.url, { method: "PUT", body: bytes, headers: { "content-type": "application/pdf" } });
  if (put.status !== 201) throw new Error(`PUT ${put.status}: ${await put.text()}`);
  return { key: issued.key, putMs: performance.now() - started };
}
/** Waits for the file's text to settle; a build without `indexing` settled during the PUT. */
async function settled(ws: string, key: string): Promise<string> {
  for (;;) {
    const file = (await call("GET", `/v1/workspaces/${ws}/files?limit=100`)).files.find(
      (f: { key: string }) => f.key === key,
    );
    if (!file.indexing) return "(no indexing field)";
    if (file.indexing.status !== "pending") return JSON.stringify(file.indexing);
    await Bun.sleep(25);
  }
}

try {
  const ws = (await call("POST", "/v1/workspaces", { name: "bench" })).id;
  const warm = await upload(ws, "small.pdf", textPdf("the albatross census"));
  await settled(ws, warm.key);
  await call("POST", "/v1/documents/query", { workspace_id: ws, query: "albatross", include: { files: true } });

  const idleKb = statusKb(proc.pid, "VmRSS");
  writeFileSync(`/proc/${proc.pid}/clear_refs`, "5");
  const bomb = pdfBomb(inflatedMb * 1024 * 1024);
  const started = performance.now();
  const { key, putMs } = await upload(ws, "bomb.pdf", bomb);
  const state = await settled(ws, key);
  // Text that was indexed costs the index writer too: wait until a search finds it.
  const search = async () =>
    (await call("POST", "/v1/documents/query", { workspace_id: ws, query: "dull boy", include: { files: true } })).items
      .length;
  let found = await search();
  while (!found && !state.includes("not_indexed")) found = await search();
  const totalMs = performance.now() - started;
  console.log(
    `PDF bomb (${Math.round(bomb.byteLength / 1024)} KB, content inflating to ${inflatedMb} MB) against ${args.checkout}; ${machineLine()}`,
  );
  console.log(
    `PUT ${Math.round(putMs)} ms; settled and searched after ${Math.round(totalMs)} ms; indexing ${state}; search hits ${found}`,
  );
  console.log(
    `server RSS: idle ${mb(idleKb)} MB, peak ${mb(statusKb(proc.pid, "VmHWM"))} MB, after ${mb(statusKb(proc.pid, "VmRSS"))} MB`,
  );
} finally {
  proc.kill("SIGTERM");
  await proc.exited;
  cleanup();
}
