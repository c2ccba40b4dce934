/**
 * `bun bench/backlog.ts [--memories 20000] [--clients 8] [--searches 200] [--curve 100,1000,5000,20000] [--held 1000,5000,10000] [--base 10000] [--skip bulk,curve,held]`:
 * what a search costs while the index writer is behind, side by side with LanceDB alone.
 *
 * 1. Bulk write: one user's `--memories` memories from `--clients` clients over HTTP (full
 *    text, no embedder; a `mnemo serve` child process), then at once `--searches` searches
 *    from the same number of clients, without waiting for the index, and at the same time
 *    LanceDB's own full-text query on a table of the same texts (built and indexed
 *    beforehand), the same queries from as many callers of its own. Prints the ingest rate
 *    and both latencies with their ratios, and the first wave of each (the first
 *    `--clients` queries, which start together on cold caches) apart.
 * 2. The curve: a fresh server holding `--base` settled memories (searched: the settled
 *    figure, taken on the server below), restarted with `MNEMO_INDEX_WRITER=never` so that
 *    nothing more is indexed, then fresh writes until `--curve` counts are pending, each
 *    followed by sequential searches:
 *    p50 / p99 after N fresh writes, and the ratio to the settled p50 (target ≤ 2).
 * 3. Held rows: the same, but the writer indexes the fresh writes and compacts nothing
 *    (no fragment bound within reach, no idle optimize), so they sit outside the full-text
 *    index, held among the pending items of its searches, which skip LanceDB's flat scan of
 *    them: what each held row adds to a search (what a search pays for them in
 *    indexing/compaction-policy.ts), against what a flat scan costs per row (0.01 ms).
 */
import * as lancedb from "@lancedb/lancedb";
import { Field, Int32, Schema, Utf8 } from "apache-arrow";
import { parseArgs } from "node:util";
import { candidateQuery } from "../src/search/analysis/analyzer";
import { client, ingest } from "./lib/client";
import { memoryTexts, queryTexts } from "./lib/corpus";
import { cleanup, giveUpAfter, removeDir, startBenchServer, tempDir } from "./lib/harness";
import { FTS_CONFIG } from "./lib/lance-direct";
import { machineLine } from "./lib/machine";
import { cpuShares, cpuTicks } from "./lib/proc";
import { round, summarize, table, type Summary } from "./lib/stats";

const { values } = parseArgs({
  options: {
    memories: { type: "string", default: "20000" },
    clients: { type: "string", default: "8" },
    searches: { type: "string", default: "200" },
    curve: { type: "string", default: "100,1000,5000,20000" },
    held: { type: "string", default: "1000,5000,10000" },
    base: { type: "string", default: "10000" },
    "curve-searches": { type: "string", default: "100" },
    seed: { type: "string", default: "42" },
    skip: { type: "string", default: "" },
  },
});
const memories = Number(values.memories);
const clients = Number(values.clients);
const searches = Number(values.searches);
const seed = Number(values.seed);
const skip = new Set(values.skip!.split(",").filter(Boolean));
const env = { EMBEDDINGS_PROVIDER: "none" };
const user = "backlog-bench";
giveUpAfter(40, "backlog bench");

/** `queries` from `concurrency` callers pulling from one queue; their latencies summarized. */
async function concurrently(queries: string[], concurrency: number, call: (q: string) => Promise<unknown>) {
  return summarize(await timedByQuery(queries, concurrency, call));
}

/** `queries` from `concurrency` callers pulling from one queue; each query's latency in ms, by its index. */
async function timedByQuery(queries: string[], concurrency: number, call: (q: string) => Promise<unknown>) {
  const latencies = new Array<number>(queries.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < queries.length; i = next++) {
        const t0 = performance.now();
        await call(queries[i]);
        latencies[i] = performance.now() - t0;
      }
    }),
  );
  return latencies;
}

/**
 * The same queries asked of two callers at the same time, each by `concurrency` workers of
 * its own: both see the same machine (the writer catching up, its compactions) and as many
 * queries in flight. (Asking each query of both in turn, as this bench did before, left
 * most workers waiting on the slower side at any moment: LanceDB then had one or two
 * queries in flight while Mnemo had six or seven.) `first`: the first wave, the first
 * `concurrency` queries of each side, which start together on cold caches.
 */
async function atOnce(
  queries: string[],
  concurrency: number,
  a: (q: string) => Promise<unknown>,
  b: (q: string) => Promise<unknown>,
) {
  const [la, lb] = await Promise.all([timedByQuery(queries, concurrency, a), timedByQuery(queries, concurrency, b)]);
  const first = (l: number[]) => summarize(l.slice(0, concurrency));
  return { a: summarize(la), b: summarize(lb), firstA: first(la), firstB: first(lb) };
}

async function lanceTable(dir: string, texts: string[]) {
  const db = await lancedb.connect(dir);
  const schema = new Schema([new Field("id", new Int32(), false), new Field("text", new Utf8(), false)]);
  const created = await db.createTable(
    "direct",
    texts.map((text, id) => ({ id, text })),
    { schema },
  );
  await created.createIndex("text", { config: lancedb.Index.fts(FTS_CONFIG) });
  return created;
}

const ratio = (a: number, b: number) => `${round(a / b, 2)}×`;

/** A measured series: `--base` memories, then the counts of `list` written on top (ascending), its queries and texts. */
function series(list: string, seriesSeed: number) {
  const base = Number(values.base);
  const counts = list
    .split(",")
    .map(Number)
    .sort((a, b) => a - b);
  return {
    base,
    counts,
    queries: queryTexts(seriesSeed, Number(values["curve-searches"])),
    texts: memoryTexts(seriesSeed + 1, base + counts[counts.length - 1]),
  };
}
const lines: string[] = [machineLine()];
const json: Record<string, unknown> = {};

try {
  if (!skip.has("bulk")) {
    const texts = memoryTexts(seed, memories);
    const queries = queryTexts(seed + 1, searches);
    const lanceDir = tempDir("mnemo-bench-backlog-lance-");
    const direct = await lanceTable(lanceDir, texts);
    // Warm both sides' caches alike: a few queries before the measured ones.
    for (const q of queries.slice(0, 20)) await direct.search(candidateQuery(q), "fts").limit(40).toArray();

    const dataDir = tempDir();
    const server = await startBenchServer({ dataDir, env });
    const ingestCpu = cpuTicks(server.pid);
    const { wallMs } = await ingest(server.url, user, texts, clients);
    const searchCpu = cpuTicks(server.pid);
    const searchStart = performance.now();
    const api = client(server.url, user);
    const {
      a: mnemo,
      b: lance,
      firstA,
      firstB,
    } = await atOnce(
      queries,
      clients,
      (q) => api.search(q, 10),
      (q) => direct.search(candidateQuery(q), "fts").select(["id", "_score"]).limit(40).toArray(),
    );
    const searchSeconds = (performance.now() - searchStart) / 1000;
    const afterSearches = cpuTicks(server.pid);
    const catchUpMs = await server.ops.drain();
    await server.stop();
    removeDir(dataDir);
    direct.close();
    removeDir(lanceDir);
    const perSecond = round(memories / (wallMs / 1000), 0);
    json.bulk = { memories, clients, perSecond, catchUpMs, mnemo, lance, firstWave: { mnemo: firstA, lance: firstB } };
    lines.push(
      `\nBulk write: ${memories} memories, ${clients} clients over HTTP: ${perSecond}/s (${round(wallMs / 1000, 1)} s); the index caught up ${round(catchUpMs / 1000, 1)} s after the searches`,
      `Then ${searches} searches from ${clients} clients, without waiting for the index, and the same queries of LanceDB from ${clients} callers of its own at the same time:`,
      table(
        ["", "p50 ms", "p99 ms", "max ms", `first ${clients}: mean / max ms`],
        [
          ["Mnemo (HTTP)", mnemo.p50, mnemo.p99, mnemo.max, `${firstA.mean} / ${firstA.max}`],
          ["LanceDB direct", lance.p50, lance.p99, lance.max, `${firstB.mean} / ${firstB.max}`],
          ["ratio", ratio(mnemo.p50, lance.p50), ratio(mnemo.p99, lance.p99), "", ""],
        ],
      ),
      `The server's CPU by thread (share of a core; children: the index writer's child, which compacts too, and ANN builds):`,
      `  during the ingest: ${cpuShares(ingestCpu, searchCpu, wallMs / 1000)}`,
      `  during the searches: ${cpuShares(searchCpu, afterSearches, searchSeconds)}`,
    );
  }

  if (!skip.has("curve")) {
    const { base, counts, queries, texts } = series(values.curve!, seed + 2);
    const dataDir = tempDir();
    let server = await startBenchServer({ dataDir, env });
    await ingest(server.url, user, texts.slice(0, base), clients);
    await server.ops.drain();
    await server.ops.settle();
    await server.stop();
    const measure = async (url: string): Promise<Summary> => {
      const api = client(url, user);
      // Warm: every query once first (caches, the JIT), then measured.
      for (const q of queries) await api.search(q, 10);
      return concurrently(queries, 1, (q) => api.search(q, 10));
    };
    // Nothing more is indexed from here: every write stays pending. Settled first, on the same server.
    server = await startBenchServer({ dataDir, env: { ...env, MNEMO_INDEX_WRITER: "never" } });
    const settled = await measure(server.url);
    const rows: Array<Array<string | number>> = [["0 (settled)", settled.p50, settled.p99, "1×"]];
    const curve: Array<{ pending: number; search: Summary }> = [];
    let written = 0;
    for (const n of counts) {
      await ingest(server.url, user, texts.slice(base + written, base + n), clients);
      written = n;
      const search = await measure(server.url);
      curve.push({ pending: n, search });
      rows.push([n, search.p50, search.p99, ratio(search.p50, settled.p50)]);
    }
    await server.stop();
    removeDir(dataDir);
    json.curve = { base, settled, curve };
    lines.push(
      `\nSearch after N fresh writes (one user, ${base} settled memories, the index writer stopped, sequential searches, limit 10):`,
      table(["N pending", "p50 ms", "p99 ms", "p50 / settled"], rows),
    );
  }
  if (!skip.has("held")) {
    const { base, counts, queries, texts } = series(values.held!, seed + 4);
    const dataDir = tempDir();
    // Nothing compacts but an explicit settle: what was written since stays outside the index.
    const server = await startBenchServer({
      dataDir,
      env: {
        ...env,
        MNEMO_INDEX_MAX_FRAGMENTS: "100000",
        MNEMO_INDEX_MAX_UNINDEXED_ROWS: "1000000",
        MNEMO_INDEX_IDLE_OPTIMIZE_MS: "3600000",
      },
    });
    await ingest(server.url, user, texts.slice(0, base), clients);
    await server.ops.drain();
    await server.ops.settle();
    const api = client(server.url, user);
    const measure = async (): Promise<Summary> => {
      for (const q of queries) await api.search(q, 10);
      return concurrently(queries, 1, (q) => api.search(q, 10));
    };
    const settled = await measure();
    const rows: Array<Array<string | number>> = [["0 (settled)", settled.p50, settled.p99, "", ""]];
    const held: Array<{ rows: number; search: Summary; unindexedAfter: number | null }> = [];
    let written = 0;
    for (const n of counts) {
      await ingest(server.url, user, texts.slice(base + written, base + n), clients);
      written = n;
      await server.ops.drain();
      const search = await measure();
      // Rows still outside the index once measured (a compaction the searches paid for would fold them in).
      const unindexedAfter = (await server.ops.state(user)).items?.indices[0]?.unindexed ?? null;
      held.push({ rows: n, search, unindexedAfter });
      const perRow = (search.p50 - settled.p50) / n;
      rows.push([n, search.p50, search.p99, round(perRow * 1000, 3), unindexedAfter ?? "?"]);
    }
    await server.stop();
    removeDir(dataDir);
    json.held = { base, settled, held };
    lines.push(
      `\nSearch with N rows held outside the full-text index by the writer (one user, ${base} settled memories, sequential searches, limit 10):`,
      table(["N held", "p50 ms", "p99 ms", "µs per held row (p50)", "unindexed after"], rows),
    );
  }
  console.log(lines.join("\n"));
  console.log(`BENCH_JSON ${JSON.stringify(json)}`);
} finally {
  cleanup();
}
