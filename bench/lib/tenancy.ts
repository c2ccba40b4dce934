/**
 * `npm run bench -- --mode tenancy` (issue "search that scales with the user"): does a
 * user's search cost depend on that user's memories alone?
 *
 *   1. One user, `scale` memories, full-text only: Mnemo over HTTP (server restarted on the
 *      data after the ingest) against LanceDB's own full-text query on the same texts
 *      (lance-direct.ts); then the same user with the fake embedder (hybrid), `hybrid` memories.
 *   2. One user's `perUser` memories on a server where the user is alone, against the same
 *      memories on a server that also holds `users - 1` other users × `perUser` (other seeds),
 *      ingested by 8 clients with the users interleaved. Searched in the server that ingested
 *      (caches shared with every other user) and again after a restart.
 *
 * Every search phase runs the same queries, sequentially, one client, limit 10.
 */
import { client } from "./client";
import { memoryTexts, queryTexts } from "./corpus";
import {
  fakeEmbedderEnv,
  removeDir,
  startBenchServer,
  startFakeEmbedderProcess,
  tempDir,
  type BenchServer,
} from "./harness";
import { lanceDirect, type DirectResult } from "./lance-direct";
import type { IndexState, TableState } from "./server-ops";
import { measureIngest, measureSearch, type IngestResult, type SearchResult } from "./speed";
import { round, summarize, type Summary } from "./stats";

export interface TenancyOptions {
  users: number;
  perUser: number;
  /** Memories of the single-user full-text run (and of LanceDB direct). */
  scale: number;
  /** Memories of the single-user hybrid run (0: skipped). */
  hybrid: number;
  queries: number;
  warmup: number;
  seed: number;
  clients: number;
  inProcess: boolean;
}

/** The figures of an ingest worth keeping (the full IngestResult is large). */
export interface IngestSummary {
  memories: number;
  perSecond: number;
  wallMs: number;
  request: Summary;
  catchUpMs: number;
  settleMs: number;
  table: TableState | null;
  vectors: TableState | null;
  lanceMB: number;
  rssMB: number;
  peakRssMB: number | null;
  /** Warnings and errors the server logged up to then. */
  log: { warn: number; error: number };
}

export interface Tables {
  open: number;
  total: number;
  vector: number;
}

export interface SingleUserRun {
  env: string;
  ingest: IngestSummary;
  /** In the restarted server. */
  search: SearchResult;
  rssMB: number;
  tables: Tables;
}

export interface TenantServerRun {
  users: number;
  ingest: IngestSummary;
  /** Tables right after the ingest, before the drain and optimize. */
  tablesAfterIngest: Tables;
  tablesAfterSettle: Tables;
  live: SearchResult;
  tablesAfterSearch: Tables;
  rssAfterSearchMB: number;
  restarted: SearchResult;
  tablesRestarted: Tables;
  rssRestartedMB: number;
}

export interface TenancyResult {
  options: TenancyOptions;
  user: string;
  fullText: SingleUserRun;
  direct: DirectResult;
  hybrid: SingleUserRun | null;
  alone: TenantServerRun;
  shared: TenantServerRun;
}

const FULL_TEXT = { EMBEDDINGS_PROVIDER: "none" };
const tenant = (u: number) => `tenant-${String(u).padStart(2, "0")}`;
/** The measured user's memories use the bench seed; the others get seeds of their own. */
const tenantSeed = (seed: number, u: number) => (u === 0 ? seed : seed + 1000 + u);
const note = (line: string) => process.stderr.write(`  tenancy: ${line}\n`);

function ingestSummary(r: IngestResult, state: IndexState): IngestSummary {
  return {
    memories: r.memories,
    perSecond: r.perSecond,
    wallMs: r.wallMs,
    request: r.latency,
    catchUpMs: r.catchUpMs,
    settleMs: r.indexBuildWaitMs,
    table: state.items,
    vectors: state.vectors,
    lanceMB: state.lanceMB,
    rssMB: state.rssMB,
    peakRssMB: state.peakRssMB,
    log: state.log,
  };
}

/** A fresh server in a fresh temp dir; `body` gets a restart function; both go afterwards. */
async function withServer<T>(
  env: Record<string, string>,
  inProcess: boolean,
  body: (server: () => BenchServer, restart: () => Promise<void>) => Promise<T>,
): Promise<T> {
  const dir = tempDir();
  let server: BenchServer | null = null;
  try {
    server = await startBenchServer({ dataDir: dir, env, inProcess });
    return await body(
      () => server!,
      async () => {
        const old = server!;
        server = null;
        await old.stop();
        server = await startBenchServer({ dataDir: dir, env, inProcess });
      },
    );
  } finally {
    await server?.stop();
    removeDir(dir);
  }
}

/** One user: ingest `texts` with 8 clients, drain and optimize, restart, search. */
async function singleUser(
  o: TenancyOptions,
  name: string,
  texts: string[],
  queries: string[],
  env: Record<string, string>,
): Promise<SingleUserRun> {
  const user = tenant(0);
  return withServer(env, o.inProcess, async (server, restart) => {
    note(`${name}: one user, ingesting ${texts.length} with ${o.clients} clients…`);
    const ingest = await measureIngest(server(), user, texts, o.clients);
    const state = await server().ops.state(user);
    await restart();
    note(`${name}: restarted on the same data; searching ${o.queries} (+${o.warmup} warm-up)…`);
    const search = await measureSearch(server(), user, queries, o.warmup);
    const after = await server().ops.state(user);
    return {
      env: env.EMBEDDINGS_PROVIDER,
      ingest: ingestSummary(ingest, state),
      search,
      rssMB: after.rssMB,
      tables: await server().ops.lanceTables(),
    };
  });
}

/**
 * `jobs` (user, text) stored by `concurrency` clients pulling from one queue, each client
 * posting as the job's user. Progress every `every` memories on stderr.
 */
async function ingestMany(url: string, jobs: Array<[string, string]>, concurrency: number, every = 50_000) {
  const latencies = new Array<number>(jobs.length);
  let next = 0;
  let done = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      const apis = new Map<string, ReturnType<typeof client>>();
      for (let i = next++; i < jobs.length; i = next++) {
        const [user, text] = jobs[i];
        let api = apis.get(user);
        if (!api) {
          api = client(url, user);
          apis.set(user, api);
        }
        const t0 = performance.now();
        await api.addMemory(text);
        latencies[i] = performance.now() - t0;
        if (++done % every === 0)
          note(`${done}/${jobs.length} ingested (${Math.round(done / ((performance.now() - start) / 1000))}/s so far)`);
      }
    }),
  );
  return { wallMs: performance.now() - start, latencies };
}

/**
 * A server holding `users` users × `perUser` memories (user 0 is the measured one),
 * ingested by `clients` clients taking the users in turn (memory i of every user, then
 * memory i + 1, …). Drained and optimized, searched live, restarted, searched again.
 */
async function tenantServer(o: TenancyOptions, users: number, queries: string[]): Promise<TenantServerRun> {
  const user = tenant(0);
  const perUser = Array.from({ length: users }, (_, u) => memoryTexts(tenantSeed(o.seed, u), o.perUser));
  const jobs: Array<[string, string]> = [];
  for (let i = 0; i < o.perUser; i++) for (let u = 0; u < users; u++) jobs.push([tenant(u), perUser[u][i]]);
  perUser.length = 0;
  return withServer(FULL_TEXT, o.inProcess, async (server, restart) => {
    const label = users === 1 ? "alone" : `${users} users`;
    note(`${label}: ingesting ${jobs.length} (${users} × ${o.perUser}) with ${o.clients} clients…`);
    await server().ops.takeTimings();
    const { wallMs, latencies } = await ingestMany(server().url, jobs, o.clients);
    const tablesAfterIngest = await server().ops.lanceTables();
    note(`${label}: ingested in ${round(wallMs / 1000, 1)} s; draining and optimizing…`);
    const catchUpMs = await server().ops.drain();
    const settleMs = await server().ops.settle();
    const tablesAfterSettle = await server().ops.lanceTables();
    const state = await server().ops.state(user);
    note(`${label}: searching ${tenant(0)}'s memories, ${o.queries} (+${o.warmup} warm-up)…`);
    const live = await measureSearch(server(), user, queries, o.warmup);
    const tablesAfterSearch = await server().ops.lanceTables();
    const rssAfterSearchMB = (await server().ops.state(user)).rssMB;
    await restart();
    note(`${label}: restarted on the same data; searching again…`);
    const restarted = await measureSearch(server(), user, queries, o.warmup);
    const tablesRestarted = await server().ops.lanceTables();
    const rssRestartedMB = (await server().ops.state(user)).rssMB;
    const ingest: IngestSummary = {
      memories: jobs.length,
      perSecond: round(jobs.length / (wallMs / 1000), 0),
      wallMs: round(wallMs, 0),
      request: summarize(latencies),
      catchUpMs: round(catchUpMs, 0),
      settleMs: round(settleMs, 0),
      table: state.items,
      vectors: null,
      lanceMB: state.lanceMB,
      rssMB: state.rssMB,
      peakRssMB: state.peakRssMB,
      log: state.log,
    };
    return {
      users,
      ingest,
      tablesAfterIngest,
      tablesAfterSettle,
      live,
      tablesAfterSearch,
      rssAfterSearchMB,
      restarted,
      tablesRestarted,
      rssRestartedMB,
    };
  });
}

export async function runTenancy(o: TenancyOptions): Promise<TenancyResult> {
  const queries = queryTexts(o.seed + 3, o.warmup + o.queries);
  const texts = memoryTexts(o.seed, o.scale);
  const fullText = await singleUser(o, `full-text@${o.scale}`, texts, queries, FULL_TEXT);
  note(`LanceDB direct: table of ${o.scale} texts, FTS index, ${o.queries} (+${o.warmup} warm-up) queries twice…`);
  const direct = await lanceDirect(texts, queries, o.warmup);
  let hybrid: SingleUserRun | null = null;
  if (o.hybrid > 0) {
    const fake = await startFakeEmbedderProcess(384);
    try {
      hybrid = await singleUser(
        o,
        `hybrid@${o.hybrid}`,
        o.hybrid === o.scale ? texts : memoryTexts(o.seed, o.hybrid),
        queries,
        fakeEmbedderEnv(fake.url),
      );
    } finally {
      await fake.stop();
    }
  }
  const alone = await tenantServer(o, 1, queries);
  const shared = await tenantServer(o, o.users, queries);
  return { options: o, user: tenant(0), fullText, direct, hybrid, alone, shared };
}
