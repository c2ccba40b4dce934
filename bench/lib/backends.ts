/**
 * The backend comparison of `npm run bench`: the same load on three set-ups, side by side.
 *
 *   embedded   one server, SQLite in its data dir (the bench's usual child-process server)
 *   postgres   one server on a fresh PostgreSQL database (same child-process server)
 *   2 replicas two `mnemo serve` CLI processes sharing a fresh PostgreSQL database and one
 *              index dir; one holds the index-writer lease, the other reads the index
 *
 * Each: N memories for one user from 8 clients (for the replicas, clients alternate between
 * the two URLs), the index caught up and optimized, then sequential searches (alternating
 * between the replicas). Full-text only (EMBEDDINGS_PROVIDER=none).
 */
import { randomBytes } from "node:crypto";
import { client, ingest as ingestOver } from "./client";
import { memoryTexts, queryTexts } from "./corpus";
import { removeDir, startBenchServer, tempDir } from "./harness";
import { machineLine } from "./machine";
import { createBenchDatabase, displayUrl, postgresUnavailable, postgresVersion, type BenchDatabase } from "./postgres";
import { spawnReplica, waitForOptimizedIndex, type Replica } from "./replicas";
import { measureIngest, measureSearch } from "./speed";
import { round, summarize, table, type Summary } from "./stats";

/** PostgreSQL storage requires a master key shared by the replicas (bench data only). */
const BENCH_MASTER_KEY = "be".repeat(32);

export interface BackendOptions {
  n: number;
  queries: number;
  warmup: number;
  seed: number;
  clients: number;
  inProcess: boolean;
  /** Admin URL of the PostgreSQL server, or null to skip the PostgreSQL rows. */
  postgresUrl: string | null;
}

export interface BackendRow {
  backend: string;
  servers: string;
  ingestPerSecond: number;
  ingestWallMs: number;
  request: Summary;
  /** Ingest end → outbox empty. */
  catchUpMs: number;
  /** Outbox empty → every row folded into the indices (forced, or the writer's idle optimize). */
  optimizeMs: number | null;
  search: Summary;
  meanResults: number;
  /** Replicas only: the searches each one answered. */
  perReplica?: Array<{ name: string; writer: boolean; search: Summary }>;
}

export interface BackendComparison {
  rows: BackendRow[];
  notes: string[];
  postgres: string | null;
}

/** A mock-token user id per row (letters, digits and dashes only). */
const user = (backend: string) =>
  `bench-backend-${backend
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")}`;

/** Rows 1 and 2: one bench server (drain and settle through its ops, as in the mode runs). */
async function singleServer(o: BackendOptions, backend: string, env: Record<string, string>): Promise<BackendRow> {
  const dir = tempDir();
  const server = await startBenchServer({ dataDir: dir, env, inProcess: o.inProcess }).catch((e) => {
    removeDir(dir);
    throw e;
  });
  try {
    process.stderr.write(`  backends: ${backend}, ${o.clients} clients: ingesting ${o.n}…\n`);
    const ingest = await measureIngest(server, user(backend), memoryTexts(o.seed, o.n), o.clients);
    process.stderr.write(`  backends: ${backend}: searching ${o.queries} (+${o.warmup} warm-up)…\n`);
    const search = await measureSearch(server, user(backend), queryTexts(o.seed, o.warmup + o.queries), o.warmup);
    return {
      backend,
      servers: `1 (${server.where.replace(/ \(pid \d+\)/, "")})`,
      ingestPerSecond: ingest.perSecond,
      ingestWallMs: ingest.wallMs,
      request: ingest.latency,
      catchUpMs: ingest.catchUpMs,
      optimizeMs: ingest.indexBuildWaitMs,
      search: search.http,
      meanResults: search.meanResults,
    };
  } finally {
    await server.stop();
    removeDir(dir);
  }
}

async function until(what: string, timeoutMs: number, check: () => Promise<boolean>, everyMs = 20): Promise<number> {
  const start = performance.now();
  while (!(await check())) {
    if (performance.now() - start > timeoutMs)
      throw new Error(`backends: ${what} did not happen within ${timeoutMs / 1000} s`);
    await Bun.sleep(everyMs);
  }
  return performance.now() - start;
}

/** Row 3: two CLI replicas on one database and one index dir. */
async function twoReplicas(o: BackendOptions, db: BenchDatabase, notes: string[]): Promise<BackendRow> {
  const backend = "postgres, 2 replicas";
  const indexDir = tempDir("mnemo-bench-index-");
  const dataDirs = [tempDir(), tempDir()];
  const env = {
    MNEMO_DATABASE_URL: db.url,
    MNEMO_INDEX_URI: indexDir,
    EMBEDDINGS_PROVIDER: "none",
    SERVER_MASTER_KEY: BENCH_MASTER_KEY,
  };
  const replicas: Replica[] = [];
  try {
    // One after the other: the first runs the migrations and takes the writer lease.
    for (const [i, name] of ["A", "B"].entries()) replicas.push(await spawnReplica(name, dataDirs[i], env));
    const health = await Promise.all(replicas.map((r) => r.health()));
    const writers = health.map((h) => h.index.writer);
    if (writers.filter(Boolean).length !== 1)
      notes.push(`replicas: expected one index writer, /health says writer=${writers.join("/")}`);
    const urls = replicas.map((r) => r.url);
    const id = user("replicas");
    process.stderr.write(
      `  backends: ${backend}, ${o.clients} clients alternating over ${urls.join(" ")}: ingesting ${o.n}…\n`,
    );
    const { wallMs, latencies } = await ingestOver(urls, id, memoryTexts(o.seed, o.n), o.clients);
    const catchUpMs = await until(
      "outbox empty after the ingest",
      10 * 60_000,
      async () => (await db.outboxRows()) === 0,
    );
    // A known term written through the reader must become searchable on both replicas.
    const reader = replicas[writers.indexOf(false)] ?? replicas[1];
    const token = `benchsentinel${randomBytes(4).toString("hex")}`;
    await client(reader.url, id).addMemory(`The ${token} memory marks the end of the ingest.`);
    await until("outbox empty after the marker", 60_000, async () => (await db.outboxRows()) === 0);
    for (const r of replicas) {
      await until(
        `the marker searchable on replica ${r.name}`,
        60_000,
        async () => (await client(r.url, id).search(token, 10)).results.some((hit) => hit.content.includes(token)),
        50,
      );
    }
    // The writer optimizes by itself 5 s after the last write; a single bench server is
    // made to do it at once (settle). Readers pick the new version up within 1 s.
    const optimizeMs = await waitForOptimizedIndex(indexDir, o.n + 1, 60_000);
    if (optimizeMs === null)
      notes.push(
        "replicas: the writer's idle optimize had not folded every row into the indices after 60 s; searched anyway",
      );
    await Bun.sleep(1_500);
    process.stderr.write(`  backends: ${backend}: searching ${o.queries} (+${o.warmup} warm-up), alternating…\n`);
    const queries = queryTexts(o.seed, o.warmup + o.queries);
    const apis = urls.map((u) => client(u, id));
    for (const [i, q] of queries.slice(0, o.warmup).entries()) await apis[i % apis.length].search(q, 10);
    const all: number[] = [];
    const byReplica: number[][] = replicas.map(() => []);
    let results = 0;
    for (const [i, q] of queries.slice(o.warmup).entries()) {
      const start = performance.now();
      const response = await apis[i % apis.length].search(q, 10);
      const ms = performance.now() - start;
      all.push(ms);
      byReplica[i % apis.length].push(ms);
      results += response.results.length;
    }
    const after = await Promise.all(replicas.map((r) => r.health()));
    if (after.map((h) => h.index.writer).join() !== writers.join())
      notes.push(
        `replicas: the writer changed during the run (${writers.join("/")} → ${after.map((h) => h.index.writer).join("/")})`,
      );
    return {
      backend,
      servers: `2 (mnemo serve CLI; writer ${
        replicas
          .filter((_, i) => writers[i])
          .map((r) => r.name)
          .join(",") || "none"
      })`,
      ingestPerSecond: round(o.n / (wallMs / 1000), 0),
      ingestWallMs: round(wallMs, 0),
      request: summarize(latencies),
      catchUpMs: round(catchUpMs, 0),
      optimizeMs: optimizeMs === null ? null : round(optimizeMs, 0),
      search: summarize(all),
      meanResults: round(results / (all.length || 1)),
      perReplica: replicas.map((r, i) => ({ name: r.name, writer: writers[i], search: summarize(byReplica[i]) })),
    };
  } finally {
    await Promise.all(replicas.map((r) => r.stop()));
    for (const dir of [indexDir, ...dataDirs]) removeDir(dir);
  }
}

/** Runs the rows that can run; a missing or unreachable PostgreSQL becomes a note. */
export async function compareBackends(o: BackendOptions): Promise<BackendComparison> {
  const notes: string[] = [];
  const rows: BackendRow[] = [await singleServer(o, "embedded (SQLite)", { EMBEDDINGS_PROVIDER: "none" })];
  if (o.postgresUrl === null) {
    notes.push("PostgreSQL rows skipped (--no-postgres)");
    return { rows, notes, postgres: null };
  }
  const why = await postgresUnavailable(o.postgresUrl);
  if (why) {
    notes.push(
      `PostgreSQL rows skipped: cannot use ${displayUrl(o.postgresUrl)} (${why}); pass --postgres-url or --no-postgres`,
    );
    return { rows, notes, postgres: null };
  }
  const postgres = `PostgreSQL ${await postgresVersion(o.postgresUrl)} at ${displayUrl(o.postgresUrl).replace(/\/[^/]*$/, "")}`;
  for (const run of [
    (db: BenchDatabase) =>
      singleServer(o, "postgres", {
        EMBEDDINGS_PROVIDER: "none",
        MNEMO_DATABASE_URL: db.url,
        SERVER_MASTER_KEY: BENCH_MASTER_KEY,
      }),
    (db: BenchDatabase) => twoReplicas(o, db, notes),
  ]) {
    const db = await createBenchDatabase(o.postgresUrl);
    try {
      rows.push(await run(db));
    } finally {
      await db.drop();
    }
  }
  return { rows, notes, postgres };
}

const ms = (v: number | undefined | null) => (v === undefined || v === null ? "-" : round(v, 1));
const ratio = (value: number, base: number | undefined) =>
  base && Number.isFinite(value) ? `${(value / base).toFixed(2)}×` : "-";

export function printBackends(c: BackendComparison, o: BackendOptions): void {
  const base = c.rows[0];
  console.log(
    `\nBackends: ${o.n} memories for one user from ${o.clients} HTTP clients, then ${o.queries} sequential searches after catch-up (full-text; ratios against the embedded row)`,
  );
  console.log(
    table(
      [
        "backend",
        "ingest memories/s",
        "search p50 ms",
        "search p99 ms",
        "ingest vs embedded",
        "p50 vs embedded",
        "p99 vs embedded",
      ],
      c.rows.map((r) => [
        r.backend,
        r.ingestPerSecond,
        ms(r.search.p50),
        ms(r.search.p99),
        ratio(r.ingestPerSecond, base.ingestPerSecond),
        ratio(r.search.p50, base.search.p50),
        ratio(r.search.p99, base.search.p99),
      ]),
    ),
  );
  console.log(machineLine());
  console.log(`\nBackend details (${c.postgres ?? "no PostgreSQL"})`);
  console.log(
    table(
      [
        "backend",
        "servers",
        "ingest s",
        "req p50/p99 ms",
        "catch-up ms",
        "optimize wait ms",
        "search p95/max ms",
        "mean results",
      ],
      c.rows.map((r) => [
        r.backend,
        r.servers,
        round(r.ingestWallMs / 1000, 1),
        `${ms(r.request.p50)}/${ms(r.request.p99)}`,
        r.catchUpMs,
        ms(r.optimizeMs),
        `${ms(r.search.p95)}/${ms(r.search.max)}`,
        r.meanResults,
      ]),
    ),
  );
  for (const r of c.rows) {
    for (const p of r.perReplica ?? []) {
      console.log(
        `  ${r.backend}: replica ${p.name} (${p.writer ? "index writer" : "reader"}) answered ${p.search.n} searches, p50/p99 ${ms(p.search.p50)}/${ms(p.search.p99)} ms`,
      );
    }
  }
  for (const note of c.notes) console.log(`note: ${note}`);
}
