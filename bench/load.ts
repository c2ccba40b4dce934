/**
 * `bun bench/load.ts [--duration 60] [--clients 16] [--backend embedded|replicas|both] [--memories 2000] [--mix 80,15,5]`:
 * a mixed load (docs/performance.md#mixed-load) on loopback: 80% memory search, 15% memory add, 5% document
 * update (`--mix` changes the percentages), from a closed loop of `--clients` concurrent Bun HTTP clients spread over
 * 8 users (the rate is the highest the server sustains at that concurrency), for
 * `--duration` seconds. Prints throughput, p50/p99 per operation and overall, the error
 * count (must be 0), the server's RSS before and after and its CPU per thread. Embedded, it then runs the
 * engine underneath alone on the same tables (see `engineCeiling`), first as the server
 * left them, then compacted (as freshly built tables of the same texts), and prints both ratios.
 *
 * `embedded`: one `mnemo serve` on SQLite. `replicas`: two `mnemo serve` on one
 * PostgreSQL database (MNEMO_BENCH_POSTGRES_URL, default the local server) and one index
 * dir, the clients alternating between them. Servers are child processes (their RSS is
 * theirs alone); wrk is not used (a Bun client issues the JSON POSTs the mix needs).
 */
import * as lancedb from "@lancedb/lancedb";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { candidateQuery as fullTextQuery } from "../src/search/analysis/analyzer";
import { cleanup, giveUpAfter, tempDir } from "./lib/harness";
import { TOPIC_WORDS as WORDS } from "./lib/corpus";
import { machineLine, treeLine } from "./lib/machine";
import { cpuShares, cpuTicks, rssMB } from "./lib/proc";
import { createBenchDatabase, DEFAULT_POSTGRES_URL, postgresUnavailable } from "./lib/postgres";
import { spawnReplica, type Replica } from "./lib/replicas";
import { round, summarize, table } from "./lib/stats";

const { values: args } = parseArgs({
  options: {
    duration: { type: "string", default: "60" },
    clients: { type: "string", default: "16" },
    backend: { type: "string", default: "embedded" },
    memories: { type: "string", default: "2000" },
    mix: { type: "string", default: "80,15,5" },
  },
});
const DURATION_S = Number(args.duration);
const CLIENTS = Number(args.clients);
const SEED_MEMORIES = Number(args.memories);
const USERS = 8;
/** Percentages of search, add and document update (`--mix 80,15,5`). */
const [SEARCH_PCT, ADD_PCT] = args.mix!.split(",").map(Number);

/** The i-th search's query: two topic words (the engine-alone run sends the same). */
const queryOf = (i: number) => `${WORDS[i % WORDS.length]} ${WORDS[(i * 5) % WORDS.length]}`;
const sentence = (i: number) =>
  `${WORDS[i % WORDS.length]} ${WORDS[(i * 7 + 3) % WORDS.length]} note ${i} about ${WORDS[(i * 13 + 5) % WORDS.length]}`;
const headersFor = (user: number) => ({
  authorization: `Bearer mock-token-load${user}`,
  "content-type": "application/json",
});

async function post(url: string, method: string, path: string, user: number, body: unknown): Promise<number> {
  const response = await fetch(url + path, { method, headers: headersFor(user), body: JSON.stringify(body) });
  await response.arrayBuffer();
  return response.status;
}

interface Setup {
  workspaces: string[];
  documents: Array<{ user: number; workspaceId: string; id: string }>;
}

async function prepare(urls: string[]): Promise<Setup> {
  const setup: Setup = { workspaces: [], documents: [] };
  for (let user = 0; user < USERS; user++) {
    const response = await fetch(`${urls[0]}/v1/workspaces`, {
      method: "POST",
      headers: headersFor(user),
      body: JSON.stringify({ name: `load ${user}` }),
    });
    const ws = (await response.json()) as { id: string };
    setup.workspaces.push(ws.id);
    for (let d = 0; d < 10; d++) {
      const id = `load-doc-${d}`;
      await post(urls[0], "POST", "/v1/documents", user, {
        workspace_id: ws.id,
        id,
        title: `document ${d}`,
        markdown: sentence(d),
      });
      setup.documents.push({ user, workspaceId: ws.id, id });
    }
  }
  // Memories to search, written concurrently.
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < SEED_MEMORIES) {
        const i = next++;
        await post(urls[i % urls.length], "POST", "/v1/memories", i % USERS, { content: sentence(i) });
      }
    }),
  );
  return setup;
}

type Op = "search" | "add" | "update";

async function run(label: string, urls: string[], pids: number[]) {
  process.stderr.write(`${label}: seeding ${SEED_MEMORIES} memories…\n`);
  const setup = await prepare(urls);
  await Bun.sleep(2_000);
  const rssBefore = pids.map(rssMB);
  const latencies: Record<Op, number[]> = { search: [], add: [], update: [] };
  const errors: Record<string, number> = {};
  let counter = 0;
  const deadline = performance.now() + DURATION_S * 1000;
  process.stderr.write(`${label}: ${CLIENTS} clients for ${DURATION_S} s…\n`);
  const started = performance.now();
  const cpuBefore = pids.map(cpuTicks);
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      while (performance.now() < deadline) {
        const i = counter++;
        const roll = (i * 2_654_435_761) % 100;
        const op: Op = roll < SEARCH_PCT ? "search" : roll < SEARCH_PCT + ADD_PCT ? "add" : "update";
        const url = urls[i % urls.length];
        const user = (client + i) % USERS;
        const t0 = performance.now();
        let status = 0;
        try {
          if (op === "search")
            status = await post(url, "POST", "/v1/memories/search", user, { query: queryOf(i), limit: 10 });
          else if (op === "add")
            status = await post(url, "POST", "/v1/memories", user, { content: sentence(SEED_MEMORIES + i) });
          else {
            const docs = setup.documents.filter((d) => d.user === user);
            const doc = docs[i % docs.length];
            status = await post(url, "PATCH", `/v1/documents/${doc.id}`, user, {
              workspace_id: doc.workspaceId,
              markdown: sentence(i),
            });
          }
        } catch (error) {
          errors[(error as Error).message.slice(0, 60)] = (errors[(error as Error).message.slice(0, 60)] ?? 0) + 1;
          continue;
        }
        latencies[op].push(performance.now() - t0);
        if (status < 200 || status >= 300) errors[`${op} ${status}`] = (errors[`${op} ${status}`] ?? 0) + 1;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = pids.map(cpuTicks);
  const rssAfter = pids.map(rssMB);
  const all = [...latencies.search, ...latencies.add, ...latencies.update];
  const rows: Array<Array<string | number>> = (Object.keys(latencies) as Op[]).map((op) => {
    const s = summarize(latencies[op]);
    return [op, s.n, round(s.n / seconds, 0), s.p50, s.p99, s.max];
  });
  const total = summarize(all);
  rows.push(["all", total.n, round(total.n / seconds, 0), total.p50, total.p99, total.max]);
  const errorCount = Object.values(errors).reduce((a, b) => a + b, 0);
  console.log(
    `\n${label}: ${round(total.n / seconds, 0)} req/s mixed over ${round(seconds, 1)} s, ${CLIENTS} clients, ${errorCount} errors${errorCount ? ` ${JSON.stringify(errors)}` : ""}`,
  );
  console.log(table(["op", "requests", "req/s", "p50 ms", "p99 ms", "max ms"], rows));
  console.log(`RSS (MB) before → after: ${pids.map((_, i) => `${rssBefore[i]} → ${rssAfter[i]}`).join(", ")}`);
  for (const [i, pid] of pids.entries())
    console.log(
      `server ${pid} CPU (% of a core; children: its child processes, the index writer's (which compacts too) and ANN builds): ${cpuShares(cpuBefore[i], cpuAfter[i], seconds)}`,
    );
  return { errors: errorCount, searchRate: latencies.search.length / seconds };
}

/**
 * The engine underneath, alone: the same users' full-text tables, read by LanceDB in this
 * process with the query the server sends (the text column, 40 candidates, the item id
 * and score), from the same number of concurrent callers, with no HTTP, no store and no
 * writes. The server's search rate cannot exceed it on the same cores.
 */
async function engineCeiling(indexDir: string, seconds: number, { compacted }: { compacted: boolean }) {
  const db = await lancedb.connect(indexDir);
  const tables = await Promise.all(
    (await db.tableNames())
      .filter((name) => name.startsWith("mem_") && !name.includes("__v_"))
      .map((name) => db.openTable(name)),
  );
  // Every row folded into one fragment and the full-text index: what freshly built tables of the same texts are.
  if (compacted) for (const table of tables) await table.optimize();
  const latencies: number[] = [];
  let counter = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      while (performance.now() < deadline) {
        const i = counter++;
        const query = fullTextQuery(queryOf(i));
        const t0 = performance.now();
        await tables[(client + i) % tables.length]
          .search(new lancedb.MatchQuery(query, "text"), "fts")
          .select(["item_id", "_score"])
          .limit(40)
          .toArray();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  for (const table of tables) table.close();
  db.close();
  const s = summarize(latencies);
  const which = compacted ? `the same ${tables.length} tables compacted` : `the same ${tables.length} tables as left`;
  console.log(
    `LanceDB full-text alone on ${which}, ${CLIENTS} callers, ${seconds} s: ${round(s.n / elapsed, 0)} queries/s, p50/p99 ${s.p50} / ${s.p99} ms`,
  );
  return s.n / elapsed;
}

giveUpAfter(Math.max(10, (DURATION_S * 4) / 60 + 10), "load");
console.log(`load: 80% search / 15% add / 5% document update, ${machineLine()}; ${treeLine()}`);
let failures = 0;
try {
  if (args.backend === "embedded" || args.backend === "both") {
    const dataDir = tempDir();
    const replica = await spawnReplica("embedded", dataDir, { MNEMO_LOG_LEVEL: "warn" });
    let searchRate = 0;
    try {
      const result = await run("embedded (SQLite)", [replica.url], [replica.pid]);
      failures += result.errors;
      searchRate = result.searchRate;
    } finally {
      await replica.stop();
    }
    const seconds = Math.min(20, DURATION_S);
    const asLeft = await engineCeiling(join(dataDir, "index"), seconds, { compacted: false });
    const compacted = await engineCeiling(join(dataDir, "index"), seconds, { compacted: true });
    console.log(
      `Mnemo searches/s under the mix ÷ LanceDB alone: ${round(searchRate / asLeft, 2)} on the tables as left, ${round(searchRate / compacted, 2)} compacted`,
    );
  }
  if (args.backend === "replicas" || args.backend === "both") {
    const problem = await postgresUnavailable(DEFAULT_POSTGRES_URL);
    if (problem) console.log(`replicas: skipped, no PostgreSQL at ${DEFAULT_POSTGRES_URL} (${problem})`);
    else {
      const db = await createBenchDatabase(DEFAULT_POSTGRES_URL);
      const env = {
        MNEMO_DATABASE_URL: db.url,
        MNEMO_INDEX_URI: tempDir("mnemo-load-index-"),
        SERVER_MASTER_KEY: "1d".repeat(32),
        MNEMO_LOG_LEVEL: "warn",
      };
      const replicas: Replica[] = [];
      try {
        for (const name of ["A", "B"]) replicas.push(await spawnReplica(name, tempDir(), env));
        failures += (
          await run(
            "PostgreSQL, 2 replicas",
            replicas.map((r) => r.url),
            replicas.map((r) => r.pid),
          )
        ).errors;
      } finally {
        for (const r of replicas) await r.stop();
        await db.drop();
      }
    }
  }
} finally {
  cleanup();
}
process.exit(failures ? 1 : 0);
