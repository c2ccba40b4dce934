/**
 * `bun bench/soak.ts [--writes 100000] [--clients 8] [--every 10000] [--searches 50] [--bytes 300] [--settle 65]
 * [--embeddings none|fake]`: a soak (docs/performance.md#soak) of single-memory writes against one embedded
 * `mnemo serve` (a child process), with full text only or with a 384-dimension embedding model (a local fake).
 * At the start and after every `--every` writes it prints: LanceDB fragments (data files
 * of live versions) and versions kept per table, the data dir's disk use against the raw
 * bytes written, search p95 over `--searches` queries, and the server's RSS. At the end
 * (after the index caught up) it checks the targets: fragments ≤ 100, old versions
 * cleaned, disk ≤ 4× raw, end search p95 within 20% of the start, RSS flat (≤ 1.5× the
 * first checkpoint's), and sets the end RSS beside a fresh server's on the same data dir
 * after the same searches (near it: the data's working set, not a leak).
 */
import * as lancedb from "@lancedb/lancedb";
import { Database } from "bun:sqlite";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { cleanup, diskBytes, fakeEmbedderEnv, giveUpAfter, startFakeEmbedderProcess, tempDir } from "./lib/harness";
import { TOPIC_WORDS as WORDS } from "./lib/corpus";
import { machineLine, treeLine } from "./lib/machine";
import { childrenRssMB, rssMB, rssPartsMB } from "./lib/proc";
import { spawnReplica } from "./lib/replicas";
import { round, summarize, table } from "./lib/stats";

const { values: args } = parseArgs({
  options: {
    writes: { type: "string", default: "100000" },
    clients: { type: "string", default: "8" },
    every: { type: "string", default: "10000" },
    searches: { type: "string", default: "50" },
    bytes: { type: "string", default: "300" },
    settle: { type: "string", default: "65" },
    embeddings: { type: "string", default: "none" },
  },
});
const WRITES = Number(args.writes);
const CLIENTS = Number(args.clients);
const EVERY = Number(args.every);
const SEARCHES = Number(args.searches);
/** About this many bytes of text per memory (a sentence of a chat, not a word). */
const BYTES = Number(args.bytes);
/** Seconds to wait after the writes: LanceDB versions older than 60 s are cleaned at the next compaction. */
const SETTLE_S = Number(args.settle);
const headers = { authorization: "Bearer mock-token-soak", "content-type": "application/json" };

/**
 * Fragments of each table's latest version, the versions it keeps, and of those the ones
 * older than 90 s (the writer keeps 60 s of versions: older ones should be gone), the
 * largest per table, read as a second process would.
 */
async function lanceShape(
  indexDir: string,
): Promise<{ fragments: number; versions: number; old: number; tables: number }> {
  const db = await lancedb.connect(indexDir);
  let fragments = 0;
  let versions = 0;
  let old = 0;
  const names = await db.tableNames();
  for (const name of names) {
    const t = await db.openTable(name);
    const stats = await t.stats();
    fragments = Math.max(fragments, stats.fragmentStats.numFragments);
    const list = await t.listVersions();
    versions = Math.max(versions, list.length);
    old = Math.max(old, list.filter((v) => Date.now() - new Date(v.timestamp).getTime() > 90_000).length);
    t.close();
  }
  db.close();
  return { fragments, versions, old, tables: names.length };
}

/** Where the data dir's bytes are: its top-level files and dirs, and the SQLite file's largest tables and indexes. */
function diskBreakdown(dir: string): string {
  const parts = readdirSync(dir).map((name) => {
    const path = join(dir, name);
    const stat = statSync(path);
    return [name, stat.isDirectory() ? diskBytes(path) : stat.size] as const;
  });
  const mb = (bytes: number) => `${round(bytes / 2 ** 20, 1)} MB`;
  let sqlite = "";
  try {
    const db = new Database(join(dir, "mnemo.sqlite"), { readonly: true });
    const objects = db
      .query<{ name: string; bytes: number }, []>(
        "SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC LIMIT 6",
      )
      .all();
    const free =
      db.query<{ freelist_count: number }, []>("PRAGMA freelist_count").get()!.freelist_count *
      db.query<{ page_size: number }, []>("PRAGMA page_size").get()!.page_size;
    db.close();
    sqlite = `; in mnemo.sqlite: ${objects.map((o) => `${o.name} ${mb(o.bytes)}`).join(", ")}, free pages ${mb(free)}`;
  } catch (error) {
    sqlite = `; mnemo.sqlite not inspected (${(error as Error).message})`;
  }
  return (
    parts
      .filter(([, bytes]) => bytes > 0)
      .sort((a, b) => b[1] - a[1])
      .map(([name, bytes]) => `${name} ${mb(bytes)}`)
      .join(", ") + sqlite
  );
}

async function searchP95(url: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < SEARCHES; i++) {
    const t0 = performance.now();
    const response = await fetch(`${url}/v1/memories/search`, {
      method: "POST",
      headers,
      body: JSON.stringify({ query: `${WORDS[i % WORDS.length]} ${WORDS[(i * 3) % WORDS.length]}`, limit: 10 }),
    });
    await response.arrayBuffer();
    times.push(performance.now() - t0);
  }
  return summarize(times).p95;
}

giveUpAfter(Math.max(20, WRITES / 200), "soak");
console.log(`soak: ${WRITES} single-memory writes, ${CLIENTS} clients; ${machineLine()}; ${treeLine()}`);
const dataDir = tempDir("mnemo-soak-");
// `--embeddings fake`: a 384-dimension embedding model (a local fake) beside the full text.
const embedder = args.embeddings === "fake" ? await startFakeEmbedderProcess(384) : null;
const serverEnv = { MNEMO_LOG_LEVEL: "warn", ...(embedder ? fakeEmbedderEnv(embedder.url) : {}) };
const server = await spawnReplica("soak", dataDir, serverEnv);
const rows: Array<Array<string | number>> = [];
let raw = 0;
let errors = 0;
let written = 0;
let oldVersions = 0;
let gate: Promise<void> | null = null;
/** `warm`: a pass of the same searches first, as the fresh server gets at the end. */
const checkpoint = async (label: string, warm = false) => {
  const shape = await lanceShape(join(dataDir, "index")).catch(() => ({
    fragments: NaN,
    versions: NaN,
    old: NaN,
    tables: 0,
  }));
  oldVersions = shape.old;
  const disk = diskBytes(dataDir);
  const index = diskBytes(join(dataDir, "index"));
  if (warm) await searchP95(server.url);
  const row = [
    label,
    written,
    shape.fragments,
    shape.versions,
    round(disk / 2 ** 20, 1),
    round(index / 2 ** 20, 1),
    raw ? round(disk / raw, 2) : "-",
    await searchP95(server.url),
    rssMB(server.pid),
    childrenRssMB(server.pid),
  ];
  rows.push(row);
  process.stderr.write(`  ${row.join("  ")}\n`);
  return row;
};
try {
  // A first batch so the start's search has something to rank.
  const first = await checkpoint("start");
  let next = 0;
  let nextCheckpoint = EVERY;
  const startedAt = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < WRITES) {
        while (gate) await gate;
        const i = next++;
        let content = `soak memory ${i} ${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]}`;
        for (let w = i; content.length < BYTES; w = (w * 31 + 7) % 9973)
          content += ` ${WORDS[w % WORDS.length]}${w % 97}`;
        raw += Buffer.byteLength(content);
        const response = await fetch(`${server.url}/v1/memories`, {
          method: "POST",
          headers,
          body: JSON.stringify({ content }),
        });
        await response.arrayBuffer();
        if (response.status !== 201) errors++;
        written++;
        if (written >= nextCheckpoint) {
          // The writers pause while a checkpoint measures, so every p95 is taken quiet.
          nextCheckpoint += EVERY;
          let release = () => {};
          gate = new Promise<void>((resolve) => (release = resolve));
          await Bun.sleep(1_000);
          await checkpoint(`after ${written}`);
          gate = null;
          release();
        }
      }
    }),
  );
  const writeSeconds = (performance.now() - startedAt) / 1000;
  // Let the index writer catch up; after SETTLE_S a few writes make it compact (and clean
  // versions older than 60 s), then the final checkpoint.
  await Bun.sleep(SETTLE_S * 1000);
  // One at a time, paced, so each is its own index commit: enough commits for a compaction.
  for (let i = 0; i < 40; i++) {
    const response = await fetch(`${server.url}/v1/memories`, {
      method: "POST",
      headers,
      body: JSON.stringify({ content: `settle ${i}` }),
    });
    await response.arrayBuffer();
    await Bun.sleep(100);
  }
  // The writer's idle optimize runs 5 s after its last batch (src/search/indexing/indexer.ts).
  await Bun.sleep(15_000);
  // Measured as the fresh server is below, after one pass of the same searches: the
  // optimize just moved every row, and each server's first pass after it loads the same.
  const last = await checkpoint(`end (+${SETTLE_S + 19} s)`, true);
  const lastParts = rssPartsMB(server.pid);
  console.log(
    table(
      [
        "checkpoint",
        "writes",
        "fragments",
        "versions kept",
        "disk MB",
        "of it index MB",
        "disk/raw",
        "search p95 ms",
        "RSS MB",
        "its children MB",
      ],
      rows,
    ),
  );
  const start = rows[1] ?? first;
  const verdicts: string[] = [
    `fragments ≤ 100: ${Number(last[2]) <= 100 ? "yes" : "NO"} (${last[2]})`,
    `old versions cleaned (none older than 90 s kept): ${oldVersions === 0 ? "yes" : "NO"} (${last[3]} kept, ${oldVersions} older than 90 s)`,
    `disk ≤ 4× raw: ${Number(last[6]) <= 4 ? "yes" : "NO"} (${last[6]}× of ${round(raw / 2 ** 20, 1)} MB raw)`,
    `search p95 within 20% of the first checkpoint: ${Number(last[7]) <= Number(start[7]) * 1.2 ? "yes" : "NO"} (${start[7]} → ${last[7]} ms)`,
    `RSS flat (≤ 1.5×): ${Number(last[8]) <= Number(start[8]) * 1.5 ? "yes" : "NO"} (${start[8]} → ${last[8]} MB)`,
  ];
  console.log(`\ndisk: ${diskBreakdown(dataDir)}`);
  // What the data itself takes: a fresh server on the same data dir, after the same searches.
  // An end RSS near it is the working set of the memories written (the full-text index is
  // held in memory), not a leak.
  await server.stop();
  const fresh = await spawnReplica("fresh", dataDir, serverEnv);
  await searchP95(fresh.url);
  const freshP95 = await searchP95(fresh.url);
  const freshRss = rssMB(fresh.pid);
  const freshParts = rssPartsMB(fresh.pid);
  await fresh.stop();
  console.log(
    `a fresh server on the same data, after the same searches: RSS ${freshRss} MB, search p95 ${freshP95} ms`,
  );
  console.log(
    `RSS by kind, the writing server at the end / the fresh one: anonymous ${lastParts.anon} / ${freshParts.anon} MB, file-backed ${lastParts.file} / ${freshParts.file} MB`,
  );
  verdicts.push(
    `search p95 at the end within 1.25× of a fresh server's on the same data: ${Number(last[7]) <= freshP95 * 1.25 ? "yes" : "NO"} (${last[7]} vs ${freshP95} ms)`,
    `RSS at the end within 1.25× of a fresh server's on the same data (no leak): ${Number(last[8]) <= freshRss * 1.25 ? "yes" : "NO"} (${last[8]} vs ${freshRss} MB)`,
  );
  console.log(
    `${written} writes in ${round(writeSeconds, 1)} s (${round(written / writeSeconds, 0)}/s), ${errors} errors`,
  );
  for (const v of verdicts) console.log(`- ${v}`);
} finally {
  await server.stop().catch(() => {});
  await embedder?.stop();
  cleanup();
}
