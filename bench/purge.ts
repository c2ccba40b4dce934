/**
 * `bun bench/purge.ts [--memories 2000] [--rounds 3] [--within-ms 60000] [--sizes 1000,10000,50000]`:
 * how long a deleted memory's text stays on disk. A `mnemo serve` (embedded, a child
 * process, `MNEMO_PURGE_WITHIN_MS=--within-ms`, default the product's 60 s) holds one
 * user's `--memories` memories; each round writes a memory with a word of its own, waits
 * until the index's files hold it and the server is idle, deletes it through the API,
 * writes nothing more, and scans every file of the data dir four times a second until
 * none holds the word: the seconds until it left the SQLite files (database and WAL), the
 * search index, and the whole data dir. Then, LanceDB alone, what the purge's rewrite of
 * one table costs at `--sizes` rows.
 */
import * as lancedb from "@lancedb/lancedb";
import { randomInt } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { fullTextIndex, itemsSchema, WORD_VECTOR_DIMS } from "../src/search/lance/lance-schema";
import { rewriteWithoutDeleted } from "../src/search/lance/rewrite";
import { ingest } from "./lib/client";
import { cleanup, tempDir } from "./lib/harness";
import { machineLine } from "./lib/machine";
import { spawnReplica } from "./lib/replicas";
import { round, table } from "./lib/stats";

const { values: args } = parseArgs({
  options: {
    memories: { type: "string", default: "2000" },
    rounds: { type: "string", default: "3" },
    "within-ms": { type: "string", default: "60000" },
    sizes: { type: "string", default: "1000,10000,50000" },
  },
});
const MEMORIES = Number(args.memories);
const ROUNDS = Number(args.rounds);
const WITHIN_MS = Number(args["within-ms"]);
const SIZES = args.sizes!.split(",").map(Number);
const GIVE_UP_MS = Math.max(3 * WITHIN_MS, 120_000);

const word = (prefix: string) =>
  prefix + Array.from({ length: 14 }, () => String.fromCharCode(97 + randomInt(26))).join("");
const filesUnder = (path: string): string[] =>
  existsSync(path)
    ? readdirSync(path, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? filesUnder(join(path, entry.name)) : [join(path, entry.name)],
      )
    : [];
/** Which of the data dir's parts hold `text` now. */
function holders(dataDir: string, text: string): { sqlite: boolean; index: boolean } {
  const holds = (paths: string[]) =>
    paths.some((path) => {
      try {
        return readFileSync(path).toString("latin1").includes(text);
      } catch {
        return false; // removed while scanned
      }
    });
  return {
    sqlite: holds([join(dataDir, "mnemo.sqlite"), join(dataDir, "mnemo.sqlite-wal")].filter(existsSync)),
    index: holds(filesUnder(join(dataDir, "index"))),
  };
}

async function call(url: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(url + path, {
    method,
    headers: { authorization: "Bearer mock-token-purge", "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path} → ${response.status}: ${await response.text()}`);
  return response.json();
}

async function until(what: string, probe: () => boolean | Promise<boolean>): Promise<void> {
  for (const started = Date.now(); !(await probe()); await Bun.sleep(100))
    if (Date.now() - started > GIVE_UP_MS) throw new Error(`gave up waiting for ${what}`);
}

/** Seconds from the delete until the word left the SQLite files, the index, and both. */
async function oneRound(url: string, dataDir: string): Promise<[number, number, number]> {
  const secret = word("purgebench");
  const memory = await call(url, "POST", "/v1/memories", { content: `the secret is ${secret}` });
  await until("the word in the index's files", () => holders(dataDir, secret).index);
  // Idle: the idle optimize (5 s after the last write) has run, as on a server nobody uses.
  await Bun.sleep(7_000);
  const deletedAt = performance.now();
  await call(url, "DELETE", `/v1/memories/${memory.id}`);
  const gone: { sqlite?: number; index?: number } = {};
  await until("the word to leave the data dir", () => {
    const now = holders(dataDir, secret);
    const at = (performance.now() - deletedAt) / 1000;
    if (!now.sqlite) gone.sqlite ??= at;
    if (!now.index) gone.index ??= at;
    return !now.sqlite && !now.index;
  });
  return [round(gone.sqlite!, 1), round(gone.index!, 1), round(Math.max(gone.sqlite!, gone.index!), 1)];
}

/** LanceDB alone: one row of `rows` deleted, then the purge's rewrite of the table. */
async function rewriteMs(rows: number): Promise<number> {
  const db = await lancedb.connect(tempDir("mnemo-bench-purge-lance-"));
  const created = await db.createEmptyTable("t", itemsSchema());
  await created.createIndex("text", { config: fullTextIndex() });
  const row = (i: number) => ({
    source_key: `memory|m${i}`,
    owner_id: "u",
    kind: "memory",
    source_id: `m${i}`,
    item_id: `m${i}`,
    workspace_id: null,
    session_id: null,
    document_type: null,
    meta: [],
    created_at: i,
    text: `memory ${i} about ferns and ${i % 97} quinces on day ${i % 31} ${"with a few more words ".repeat(20)}`,
    context_before: "",
    context_after: "",
    wvec: Array.from({ length: WORD_VECTOR_DIMS }, (_, d) => ((i * 31 + d) % 17) / 17),
  });
  for (let from = 0; from < rows; from += 5_000)
    await created.add(Array.from({ length: Math.min(5_000, rows - from) }, (_, k) => row(from + k)));
  await created.optimize({ cleanupOlderThan: new Date() });
  await created.delete("source_key = 'memory|m1'");
  const started = performance.now();
  await rewriteWithoutDeleted(created, () => true);
  const ms = performance.now() - started;
  created.close();
  db.close();
  return round(ms, 0);
}

console.log(
  `purge: ${MEMORIES} memories of one user, ${ROUNDS} rounds, MNEMO_PURGE_WITHIN_MS=${WITHIN_MS}; ${machineLine()}`,
);
try {
  const dataDir = tempDir("mnemo-bench-purge-");
  const server = await spawnReplica("purge", dataDir, { MNEMO_PURGE_WITHIN_MS: String(WITHIN_MS) });
  await ingest(
    server.url,
    "purge",
    Array.from({ length: MEMORIES }, (_, i) => `memory ${i} about ferns and ${i % 97} quinces on day ${i % 31}`),
    8,
  );
  const rows: Array<Array<string | number>> = [];
  for (let r = 1; r <= ROUNDS; r++) rows.push([r, ...(await oneRound(server.url, dataDir))]);
  await server.stop();
  console.log(`\nseconds from the DELETE until no file holds the deleted text (nothing written after it)`);
  console.log(table(["round", "SQLite file + WAL", "search index", "data dir"], rows));
  const sizes: Array<Array<string | number>> = [];
  for (const size of SIZES) sizes.push([size, await rewriteMs(size)]);
  console.log(
    `\nthe purge's rewrite of one table (LanceDB alone: live rows written again, full-text index rebuilt, old versions removed)`,
  );
  console.log(table(["rows", "ms"], sizes));
} finally {
  cleanup();
}
