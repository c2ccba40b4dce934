/**
 * `npm run bench`: ingest rate, index catch-up, LanceDB fragment counts and search
 * latency over HTTP (`--scale N` adds the single-user run at scale).
 *
 *   bun bench/run.ts [--n 10000] [--queries 500] [--warmup 50] [--mode fulltext|fake|all|none]
 *                    [--scale 100000] [--seed 42] [--in-process]
 *                    [--no-backends] [--no-postgres] [--postgres-url postgres://…]
 *
 * Per mode (full-text only; the tests' fake embedder, 384-d, through the openai provider):
 * three fresh servers, each one user: N memories from 1 client, from 8 clients, and from
 * 8 clients while a 9th searches. Each is then drained (the index catch-up) and the first
 * two get the search-latency phase and read-your-writes probes. Then the backend comparison
 * (bench/lib/backends.ts): the same 8-client ingest and search on embedded SQLite, on one
 * server with PostgreSQL, and on two `mnemo serve` replicas sharing a PostgreSQL database
 * and an index dir, side by side (`--no-postgres`: the embedded row only; skipped with a
 * note when PostgreSQL cannot be reached; `--no-backends`: none). Each PostgreSQL row gets
 * a fresh database `mnemo_bench_<random>`, dropped afterwards. `--mode none` skips the mode
 * runs. Prints tables, then one `BENCH_JSON {…}` line with every figure.
 *
 *   bun bench/run.ts --mode tenancy [--users 50] [--per-user 10000] [--scale 100000]
 *                    [--hybrid <scale>] [--queries 500] [--warmup 50] [--seed 42] [--in-process]
 *
 * `--mode tenancy` (issue "search that scales with the user"; bench/lib/tenancy.ts) runs
 * instead of everything above: (1) one user with `--scale` memories, full-text only, Mnemo's
 * HTTP search in a server restarted on the data vs LanceDB's own full-text query on the same
 * texts (bench/lib/lance-direct.ts), with ratios, and the same user with the fake embedder
 * (hybrid) at `--hybrid` memories (0: skipped); (2) one user's `--per-user` memories searched
 * on a server where the user is alone vs on one that also holds `--users`−1 other users ×
 * `--per-user` (8 clients, users interleaved): p50/p99 and ratio (target ≤1.3×), ingest rate,
 * server RSS, open LanceDB table handles and the number of index tables.
 *
 * Only local processes are contacted: the server, the fake embedder, and the PostgreSQL
 * server of `--postgres-url` (default MNEMO_BENCH_POSTGRES_URL or postgres://postgres@127.0.0.1:5432/postgres).
 */
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { memoryTexts, queryTexts } from "./lib/corpus";
import { compareBackends, printBackends, type BackendComparison, type BackendOptions } from "./lib/backends";
import {
  cleanup,
  fakeEmbedderEnv,
  giveUpAfter,
  removeDir,
  startBenchServer,
  startFakeEmbedderProcess,
  tempDir,
} from "./lib/harness";
import { machine, machineLine, treeLine } from "./lib/machine";
import { DEFAULT_POSTGRES_URL } from "./lib/postgres";
import {
  measureFirstSearchAfterWrites,
  measureIngest,
  measureSearch,
  type IngestResult,
  type SearchResult,
} from "./lib/speed";
import { round, table } from "./lib/stats";
import { runTenancy, type TenancyOptions } from "./lib/tenancy";
import { printTenancy } from "./lib/tenancy-report";

function usage(message: string): never {
  console.error(
    `bench: ${message}\nusage: npm run bench -- [--n 10000] [--queries 500] [--warmup 50] [--mode fulltext|fake|all|none] [--scale 100000] [--seed 42] [--in-process] [--no-backends] [--no-postgres] [--postgres-url URL]\n` +
      `       npm run bench -- --mode tenancy [--users 50] [--per-user 10000] [--scale 100000] [--hybrid N] [--queries 500] [--warmup 50] [--seed 42] [--in-process]`,
  );
  process.exit(2);
}

const OPTIONS = {
  n: { type: "string", default: "10000" },
  queries: { type: "string", default: "500" },
  warmup: { type: "string", default: "50" },
  mode: { type: "string", default: "all" },
  scale: { type: "string" },
  seed: { type: "string", default: "42" },
  "in-process": { type: "boolean", default: false },
  backends: { type: "boolean", default: true },
  postgres: { type: "boolean", default: true },
  "postgres-url": { type: "string", default: DEFAULT_POSTGRES_URL },
  users: { type: "string", default: "50" },
  "per-user": { type: "string", default: "10000" },
  hybrid: { type: "string" },
} as const;
let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowNegative: true }>>;
try {
  parsed = parseArgs({ options: OPTIONS, allowNegative: true });
} catch (error) {
  usage((error as Error).message);
}
const args = parsed.values;

function positive(name: string, value: string | undefined, min = 1): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) usage(`--${name} must be an integer ≥ ${min} (got ${value})`);
  return n;
}

const N = positive("n", args.n);
const QUERIES = positive("queries", args.queries);
const WARMUP = positive("warmup", args.warmup, 0);
const SEED = positive("seed", args.seed, 0);
const MODE_SETS: Record<string, string[]> = {
  all: ["fulltext", "fake"],
  fulltext: ["fulltext"],
  fake: ["fake"],
  none: [],
  tenancy: [],
};
const MODES = MODE_SETS[args.mode!] ?? [];
if (!(args.mode! in MODE_SETS)) usage(`--mode must be fulltext, fake, all, none or tenancy (got ${args.mode})`);
const IN_PROCESS = args["in-process"]!;
const TENANCY: TenancyOptions | null = args.mode === "tenancy" ? tenancyOptions() : null;
// In tenancy mode --scale is the single-user run of the tenancy bench, not runScale.
const SCALE = args.scale === undefined || TENANCY ? null : positive("scale", args.scale);
const BACKENDS: BackendOptions | null =
  args.backends && !TENANCY
    ? {
        n: N,
        queries: QUERIES,
        warmup: WARMUP,
        seed: SEED,
        clients: 8,
        inProcess: IN_PROCESS,
        postgresUrl: args.postgres ? args["postgres-url"]! : null,
      }
    : null;
// Generous: the default run takes about a minute on 2 cores, 100k memories about two.
if (!TENANCY) giveUpAfter(Math.ceil(15 + (N / 10_000) * (BACKENDS ? 9 : 5) + ((SCALE ?? 0) / 100_000) * 20), "bench");
// Tenancy: about 15 minutes with the defaults (500k memories in the many-user server) on 2 cores.
else
  giveUpAfter(
    Math.ceil(
      20 +
        (((TENANCY.users + 1) * TENANCY.perUser) / 100_000) * 8 +
        (TENANCY.scale / 100_000) * 10 +
        (TENANCY.hybrid / 100_000) * 20,
    ),
    "bench",
  );

function tenancyOptions(): TenancyOptions {
  const users = positive("users", args.users, 2);
  const scale = positive("scale", args.scale ?? "100000");
  const hybrid = args.hybrid === undefined ? scale : positive("hybrid", args.hybrid, 0);
  return {
    users,
    perUser: positive("per-user", args["per-user"]),
    scale,
    hybrid,
    queries: QUERIES,
    warmup: WARMUP,
    seed: SEED,
    clients: 8,
    inProcess: IN_PROCESS,
  };
}

interface ModeRun {
  mode: string;
  clients: number;
  /** True for the run where one more client searched while the others wrote. */
  mixed: boolean;
  ingest: IngestResult;
  search: SearchResult | null;
  readYourWrites: Array<{ writes: number; firstSearchMs: number; mode: string }>;
}

const label = (r: ModeRun) => (r.mixed ? `${r.clients}+1 searching` : String(r.clients));

const ms = (v: number | undefined) => (v === undefined ? "-" : round(v, 1));

/**
 * One fresh server and user: ingest N with `clients`, drain, search, probe read-your-writes.
 * `mixed`: one more client searches during the ingest instead (no separate search phase).
 */
async function runOne(mode: string, clients: number, env: Record<string, string>, mixed = false): Promise<ModeRun> {
  const dir = tempDir();
  const server = await startBenchServer({ dataDir: dir, env, inProcess: IN_PROCESS }).catch((e) => {
    removeDir(dir);
    throw e;
  });
  try {
    const user = `bench-${mode}-${clients}`;
    process.stderr.write(`  ${mode}, ${clients} client(s)${mixed ? " + 1 searching" : ""}: ingesting ${N}…\n`);
    const ingest = await measureIngest(
      server,
      user,
      memoryTexts(SEED, N),
      clients,
      mixed ? queryTexts(SEED, QUERIES) : undefined,
    );
    if (mixed) return { mode, clients, mixed, ingest, search: null, readYourWrites: [] };
    process.stderr.write(`  ${mode}, ${clients} client(s): searching ${QUERIES} (+${WARMUP} warm-up)…\n`);
    const search = await measureSearch(server, user, queryTexts(SEED, WARMUP + QUERIES), WARMUP);
    const extra = memoryTexts(SEED + 1, 1001);
    const readYourWrites = [
      await measureFirstSearchAfterWrites(server, user, extra.slice(0, 1), "flight to Lisbon"),
      await measureFirstSearchAfterWrites(server, user, extra.slice(1), "appointment with doctor Patel"),
    ];
    return { mode, clients, mixed, ingest, search, readYourWrites };
  } finally {
    await server.stop();
    removeDir(dir);
  }
}

function printIngest(runs: ModeRun[], count = N) {
  console.log(
    `\nIngest of ${count} memories over HTTP (one user; POST /v1/memories), then index catch-up (outbox drained)`,
  );
  console.log(
    table(
      [
        "mode",
        "clients",
        "mem/s",
        "req p50 ms",
        "req p99 ms",
        "search during p50/p99",
        "pending after",
        "catch-up ms",
        "+ vector index wait ms",
        "items frags ingest→drain",
        "vector frags ingest→drain",
        "items versions",
        "index MB",
        "server RSS MB",
      ],
      runs
        .map((run) => [run, run.ingest] as const)
        .map(([run, r]) => [
          run.mode,
          label(run),
          r.perSecond,
          ms(r.latency.p50),
          ms(r.latency.p99),
          r.searchDuringIngest
            ? `${ms(r.searchDuringIngest.http.p50)}/${ms(r.searchDuringIngest.http.p99)} (${r.searchDuringIngest.queries})`
            : "-",
          `${r.afterIngest.outbox.pendingText}t/${r.afterIngest.outbox.pendingVector}v`,
          r.catchUpMs,
          r.indexBuildWaitMs,
          `${r.afterIngest.items?.fragments ?? 0}→${r.afterDrain.items?.fragments ?? 0}`,
          r.afterDrain.vectorTable
            ? `${r.afterIngest.vectors?.fragments ?? 0}→${r.afterDrain.vectors?.fragments ?? 0}`
            : "-",
          r.afterDrain.items?.versions,
          r.afterDrain.lanceMB,
          r.afterDrain.rssMB,
        ]),
    ),
  );
  console.log("\nIndexer work while ingesting | while catching up (calls, summed ms, rows or texts)");
  const rows: Array<Array<string | number>> = [];
  for (const run of runs) {
    const { ingest: during, catchUp } = run.ingest.work;
    for (const stage of new Set([...Object.keys(during), ...Object.keys(catchUp)])) {
      const a = during[stage];
      const b = catchUp[stage];
      rows.push([
        run.mode,
        label(run),
        stage,
        a?.calls ?? 0,
        a?.ms ?? 0,
        a?.items ?? 0,
        b?.calls ?? 0,
        b?.ms ?? 0,
        b?.items ?? 0,
      ]);
    }
  }
  console.log(table(["mode", "clients", "stage", "calls", "ms", "rows", "| calls", "ms", "rows"], rows));
  console.log("\nIndices after catch-up and any vector-index build (rows indexed / not yet indexed)");
  const indexRows: Array<Array<string | number>> = [];
  for (const run of runs) {
    const r = run.ingest;
    for (const [name, state] of [
      ["items", r.afterDrain.items],
      [r.afterDrain.vectorTable ?? "", r.afterDrain.vectors],
    ] as const) {
      if (!state) continue;
      const indices =
        state.indices
          .map((i) => `${i.type} ${i.indexed}/${i.unindexed}${i.parts ? ` in ${i.parts} part(s)` : ""}`)
          .join(", ") || "none";
      indexRows.push([run.mode, label(run), name, state.rows, state.fragments, state.smallFragments, indices]);
    }
  }
  console.log(table(["mode", "clients", "table", "rows", "fragments", "small", "indices"], indexRows));
  for (const run of runs) {
    const d = run.ingest.searchDuringIngest;
    if (!d) continue;
    console.log(
      `search during ingest (${run.mode}, ${d.queries} searches): p50/p99 ms — HTTP ${ms(d.http.p50)}/${ms(d.http.p99)}, waiting for the user's pending rows to be indexed (flush) ${ms(d.flush.p50)}/${ms(d.flush.p99)}, full-text ${ms(d.text.p50)}/${ms(d.text.p99)}, vector ${ms(d.vector.p50)}/${ms(d.vector.p99)}`,
    );
  }
  const unwrapped = new Set(runs.flatMap((r) => r.ingest.afterDrain.unwrapped));
  if (unwrapped.size) console.log(`note: no timings for ${[...unwrapped].join(", ")} (not found on this server build)`);
}

function printSearch(title: string, rows: Array<{ label: string; clients: number | string; search: SearchResult }>) {
  console.log(`\n${title}`);
  console.log(
    table(
      [
        "mode",
        "ingested by",
        "queries",
        "p50",
        "p95",
        "p99",
        "max",
        "excl. embed p50/p99",
        "engine p50/p99",
        "flush p99",
        "embed p50/p99",
        "fts p50/p99",
        "vector p50/p99",
        "outside engine p50/p99",
        "mode/strategy",
      ],
      rows.map(({ label, clients, search: s }) => [
        label,
        `${clients} client(s)`,
        s.queries,
        ms(s.http.p50),
        ms(s.http.p95),
        ms(s.http.p99),
        ms(s.http.max),
        s.httpExclEmbed ? `${ms(s.httpExclEmbed.p50)}/${ms(s.httpExclEmbed.p99)}` : "-",
        s.engine ? `${ms(s.engine.p50)}/${ms(s.engine.p99)}` : "-",
        s.flush ? ms(s.flush.p99) : "-",
        s.embed ? `${ms(s.embed.p50)}/${ms(s.embed.p99)}` : "-",
        s.text ? `${ms(s.text.p50)}/${ms(s.text.p99)}` : "-",
        s.vector ? `${ms(s.vector.p50)}/${ms(s.vector.p99)}` : "-",
        s.outsideEngine ? `${ms(s.outsideEngine.p50)}/${ms(s.outsideEngine.p99)}` : "-",
        Object.entries(s.modes)
          .map(([k, v]) => `${k}×${v}`)
          .join(" "),
      ]),
    ),
  );
  for (const { label, clients, search: s } of rows) {
    console.log(
      `  ${label}/${clients}: mean results ${s.meanResults}; slowest: ${s.slowest.map((q) => `${q.ms} ms "${q.query}"`).join("; ")}`,
    );
  }
}

function printTargets(runs: ModeRun[]) {
  const check = (ok: boolean) => (ok ? "ok" : "MISSED");
  console.log("\nTargets");
  for (const run of runs.filter((r) => r.clients === 8 && r.search)) {
    console.log(
      `  ${run.mode}: ≥1000 mem/s with 8 clients: ${run.ingest.perSecond} ${check(run.ingest.perSecond >= 1000)}; ` +
        `search p99 ≤20 ms: ${ms(run.search!.http.p99)} ${check(run.search!.http.p99 <= 20)}; ` +
        `fragments ≤100 after ingest: items ${run.ingest.afterIngest.items?.fragments ?? 0}${run.ingest.afterIngest.vectorTable ? `, vectors ${run.ingest.afterIngest.vectors?.fragments ?? 0}` : ""} ` +
        `${check(Math.max(run.ingest.afterIngest.items?.fragments ?? 0, run.ingest.afterIngest.vectors?.fragments ?? 0) <= 100)}`,
    );
  }
}

/** The single-user run: `count` memories with the fake embedder, hybrid search, RSS. */
async function runScale(count: number) {
  const fake = await startFakeEmbedderProcess(384);
  const dir = tempDir();
  let server = await startBenchServer({ dataDir: dir, env: fakeEmbedderEnv(fake.url), inProcess: IN_PROCESS });
  try {
    const user = "bench-scale";
    process.stderr.write(`  scale: ingesting ${count} with 8 clients (fake embedder)…\n`);
    const ingest = await measureIngest(server, user, memoryTexts(SEED, count), 8);
    process.stderr.write(`  scale: searching ${QUERIES} (+${WARMUP} warm-up)…\n`);
    const search = await measureSearch(server, user, queryTexts(SEED, WARMUP + QUERIES), WARMUP);
    const vectorRecall = await server.ops.vectorIndexRecall(user, queryTexts(SEED + 7, 100), 10);
    const state = await server.ops.state(user);
    const run: ModeRun = { mode: `fake@${count}`, clients: 8, mixed: false, ingest, search, readYourWrites: [] };
    // A server that holds the memories but did not ingest them (the next morning): a fresh
    // process on the same data dir, the same kind of searches, its resident memory.
    await server.stop();
    process.stderr.write(`  scale: restarted on the same data; searching ${QUERIES} (+${WARMUP} warm-up)…\n`);
    server = await startBenchServer({ dataDir: dir, env: fakeEmbedderEnv(fake.url), inProcess: IN_PROCESS });
    const restartedSearch = await measureSearch(server, user, queryTexts(SEED + 3, WARMUP + QUERIES), WARMUP);
    const restarted = await server.ops.state(user);
    const restartedRun: ModeRun = {
      mode: `fake@${count} restarted`,
      clients: 8,
      mixed: false,
      ingest,
      search: restartedSearch,
      readYourWrites: [],
    };
    return {
      run,
      restartedRun,
      vectorRecall,
      rssMB: state.rssMB,
      peakRssMB: state.peakRssMB,
      restartedRssMB: restarted.rssMB,
    };
  } finally {
    await server.stop();
    removeDir(dir);
    await fake.stop();
  }
}

const load = () =>
  loadavg()
    .map((v) => v.toFixed(2))
    .join(" ");

async function main() {
  console.log(machineLine());
  console.log(treeLine());
  console.log(
    `load average before the bench: ${load()} (other processes on this machine skew the figures; the bench itself keeps about 2 cores busy)`,
  );
  console.log(
    `server: ${IN_PROCESS ? "in-process (same Bun process as the client)" : "separate Bun process (bench/lib/server-child.ts → startServer), client in this process"}; fake embedder in its own process`,
  );
  if (TENANCY) return tenancyMain(TENANCY);
  const sizes = [
    MODES.length ? `${N} per mode run` : "",
    BACKENDS ? `${N} per backend run` : "",
    SCALE ? `${SCALE} for the scale run` : "",
  ]
    .filter(Boolean)
    .join(", ");
  console.log(
    `corpus: generated memories (seed ${SEED}; ${sizes}); ${QUERIES} distinct queries after ${WARMUP} warm-up; limit 10`,
  );
  const started = performance.now();
  const runs: ModeRun[] = [];
  for (const mode of MODES) {
    const fake = mode === "fake" ? await startFakeEmbedderProcess(384) : null;
    const env = fake ? fakeEmbedderEnv(fake.url) : { EMBEDDINGS_PROVIDER: "none" };
    try {
      for (const clients of [1, 8]) runs.push(await runOne(mode, clients, env));
      runs.push(await runOne(mode, 8, env, true));
    } finally {
      await fake?.stop();
    }
  }
  if (runs.length) {
    printIngest(runs);
    const searched = runs
      .filter((r) => r.search)
      .map((r) => ({ label: r.mode, clients: r.clients, search: r.search! }));
    printSearch(`Search latency over HTTP at ${N} memories (ms; sequential, one client; after catch-up)`, searched);
    console.log("\nRead-your-writes: first search right after fresh writes (ms; includes indexing them)");
    console.log(
      table(
        ["mode", "ingested by", "fresh writes", "first search ms", "mode"],
        runs.flatMap((r) => r.readYourWrites.map((p) => [r.mode, r.clients, p.writes, p.firstSearchMs, p.mode])),
      ),
    );
    printTargets(runs);
  }
  let backends: BackendComparison | null = null;
  if (BACKENDS) {
    backends = await compareBackends(BACKENDS);
    printBackends(backends, BACKENDS);
  }
  let scale = null;
  if (SCALE) {
    scale = await runScale(SCALE);
    console.log(`\n=== Scale: one user, ${SCALE} memories, fake embedder 384-d (hybrid), ingested with 8 clients ===`);
    printIngest([scale.run], SCALE);
    printSearch(
      `Search latency over HTTP at ${SCALE} memories (ms; sequential, one client; after catch-up, then in a restarted server)`,
      [
        { label: scale.run.mode, clients: 8, search: scale.run.search! },
        { label: scale.restartedRun.mode, clients: 8, search: scale.restartedRun.search! },
      ],
    );
    const v = scale.vectorRecall;
    const r3 = (x: number | null) => (x === null ? "-" : x.toFixed(3));
    console.log(
      `  vector index: ${v ? `${v.vectorIndex}; the server's vector search vs an exact scan, recall@${v.k} ${r3(v.recallAtK)} (counting exact-distance ties as hits ${r3(v.recallAtKTieAware)}) over ${v.queries} queries` : "no vector table"}`,
    );
    const excl = scale.run.search!.httpExclEmbed;
    const again = scale.restartedRun.search!.httpExclEmbed;
    console.log(
      `  targets: search excl. query embedding p50 ≤5 ms: ${ms(excl?.p50)} (restarted ${ms(again?.p50)}), p99 ≤15 ms: ${ms(excl?.p99)} (restarted ${ms(again?.p99)}); RSS ≤500 MB: ${scale.rssMB} MB after ingesting and searching in one process (peak ${scale.peakRssMB ?? "-"} MB), ${scale.restartedRssMB} MB in a restarted server after ${QUERIES + WARMUP} searches`,
    );
  }
  const totalS = round((performance.now() - started) / 1000, 1);
  console.log(`\ntotal ${totalS} s; load average at end: ${load()}`);
  console.log(
    `BENCH_JSON ${JSON.stringify({ machine: machine(), server: IN_PROCESS ? "in-process" : "child-process", n: N, queries: QUERIES, warmup: WARMUP, seed: SEED, runs, backends, scale, totalS })}`,
  );
}

/** `--mode tenancy`: the tenancy bench alone (the header lines are main's). */
async function tenancyMain(o: TenancyOptions) {
  console.log(
    `corpus: generated memories; the measured user's from seed ${o.seed}, the other users' from seeds ${o.seed + 1001}…; ` +
      `${o.queries} distinct queries (seed ${o.seed + 3}) after ${o.warmup} warm-up, the same in every search phase; limit 10`,
  );
  const started = performance.now();
  const tenancy = await runTenancy(o);
  printTenancy(tenancy);
  const totalS = round((performance.now() - started) / 1000, 1);
  console.log(`\ntotal ${totalS} s; load average at end: ${load()}`);
  console.log(
    `BENCH_JSON ${JSON.stringify({ machine: machine(), server: IN_PROCESS ? "in-process" : "child-process", mode: "tenancy", tenancy, totalS })}`,
  );
}

try {
  await main();
} catch (error) {
  console.error(`bench failed: ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  cleanup();
}
