/**
 * `bun bench/lance-fts-leak.ts [--ops 1200] [--tables 1]`: LanceDB alone (no Mnemo code), the
 * memory the index writer's compactions keep. Each op adds one row to a table and runs
 * `optimize` (what Mnemo's idle optimize does after a write), round-robin over `--tables`
 * tables; the same run twice, with a full-text index on the text column and without any
 * index, and with the index but a new connection every 64 optimizes (what Mnemo's index
 * writer does). Prints the process's anonymous RSS as the ops go: with the full-text index
 * it grows with every optimize, by about the size of the table's index, until the
 * connection is closed (caches, allocator arenas and `malloc_trim` do not change it).
 */
import * as lancedb from "@lancedb/lancedb";
import { Field, Schema, Utf8 } from "apache-arrow";
import { parseArgs } from "node:util";
import { fullTextIndex } from "../src/search/lance/lance-schema";
import { releaseFreedMemory } from "../src/lib/memory-trim";
import { cleanup, tempDir } from "./lib/harness";
import { directSession } from "./lib/lance-direct";
import { machineLine, treeLine } from "./lib/machine";
import { statusKb } from "./lib/proc";
import { table } from "./lib/stats";

const { values: args } = parseArgs({
  options: { ops: { type: "string", default: "1200" }, tables: { type: "string", default: "1" } },
});
const OPS = Number(args.ops);
const TABLES = Number(args.tables);
const STEPS = 6;
const schema = new Schema([new Field("id", new Utf8(), false), new Field("text", new Utf8(), false)]);
const anonMB = () => Math.round(statusKb(process.pid, "RssAnon") / 1024);

/** `renewEvery`: a new connection (the old one closed) after that many optimizes, as Mnemo's index writer does. */
async function run(withIndex: boolean, renewEvery = Number.POSITIVE_INFINITY): Promise<number[]> {
  const dir = tempDir("mnemo-fts-leak-");
  const session = directSession();
  let db = await lancedb.connect(dir, {}, session);
  for (let t = 0; t < TABLES; t++) {
    const created = await db.createEmptyTable(`t${t}`, schema);
    if (withIndex) await created.createIndex("text", { config: fullTextIndex() });
    created.close();
  }
  const samples = [anonMB()];
  for (let op = 1; op <= OPS; op++) {
    const handle = await db.openTable(`t${op % TABLES}`);
    await handle.add([{ id: `r${op}`, text: `note ${op}: the ferns on the balcony need water on day ${op % 31}` }]);
    await handle.optimize({ cleanupOlderThan: new Date(Date.now() - 1_000) });
    handle.close();
    if (op % renewEvery === 0) {
      db.close();
      db = await lancedb.connect(dir, {}, session);
    }
    if (op % Math.ceil(OPS / STEPS) === 0 || op === OPS) {
      releaseFreedMemory();
      samples.push(anonMB());
    }
  }
  db.close();
  return samples;
}

console.log(`LanceDB alone: ${OPS} × (add one row, optimize) over ${TABLES} table(s); ${machineLine()}; ${treeLine()}`);
try {
  const indexed = await run(true);
  const renewed = await run(true, 64);
  const plain = await run(false);
  const header = ["ops", ...indexed.map((_, i) => (i === 0 ? "0" : String(Math.min(OPS, i * Math.ceil(OPS / STEPS)))))];
  console.log(`\nanonymous RSS of this process (MB) after n ops (malloc_trim before each reading)`);
  console.log(
    table(header, [
      ["full-text index", ...indexed],
      ["the same, connection renewed every 64", ...renewed],
      ["no index", ...plain],
    ]),
  );
  const growth = (s: number[]) => (((s[s.length - 1] - s[1]) / (OPS - Math.ceil(OPS / STEPS))) * 1024).toFixed(0);
  console.log(
    `\nkept per optimize after the first reading: ${growth(indexed)} KB with the full-text index, ${growth(renewed)} KB with the connection renewed every 64, ${growth(plain)} KB without an index (each run starts where the one before ended: its memory goes once its connection is closed)`,
  );
} finally {
  cleanup();
}
