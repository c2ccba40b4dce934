/**
 * The measurements of `npm run bench` for one server: ingest, index catch-up, fragment
 * counts, search latency split into its stages, and read-your-writes probes.
 */
import { client, ingest } from "./client";
import type { BenchServer } from "./harness";
import type { IndexState, SearchTiming, WorkTotals } from "./server-ops";
import { round, summarize, type Summary } from "./stats";

export interface IngestResult {
  clients: number;
  memories: number;
  perSecond: number;
  wallMs: number;
  latency: Summary;
  afterIngest: IndexState;
  catchUpMs: number;
  /** Waiting, after the drain, for a background vector-index build (0 when none ran). */
  indexBuildWaitMs: number;
  afterDrain: IndexState;
  /** Indexer work (LanceDB writes, optimize, document embedding) while ingesting and while catching up. */
  work: { ingest: WorkTotals; catchUp: WorkTotals };
  /** Searches run back to back by one more client while the ingest ran (when asked for). */
  searchDuringIngest: { queries: number; http: Summary; flush: Summary; text: Summary; vector: Summary } | null;
}

export interface SearchResult {
  queries: number;
  /** Client-side HTTP round trip. */
  http: Summary;
  /** Round trip minus the query embedding of the same request. */
  httpExclEmbed: Summary | null;
  engine: Summary | null;
  flush: Summary | null;
  embed: Summary | null;
  text: Summary | null;
  vector: Summary | null;
  /** HTTP round trip minus engine time: routing, validation, auth, SQLite reads, JSON. */
  outsideEngine: Summary | null;
  modes: Record<string, number>;
  meanResults: number;
  slowest: Array<{ query: string; ms: number }>;
}

export async function measureIngest(
  server: BenchServer,
  user: string,
  texts: string[],
  clients: number,
  searchWhileIngesting?: string[],
): Promise<IngestResult> {
  await server.ops.takeTimings();
  let ingesting = true;
  const writing = ingest(server.url, user, texts, clients).finally(() => (ingesting = false));
  const searching = searchWhileIngesting ? searchUntil(server, user, searchWhileIngesting, () => ingesting) : null;
  const { wallMs, latencies } = await writing;
  const during = await searching;
  const afterIngest = await server.ops.state(user);
  const { work: ingestWork, searches } = await server.ops.takeTimings();
  const catchUpMs = await server.ops.drain();
  const indexBuildWaitMs = await server.ops.settle();
  const afterDrain = await server.ops.state(user);
  const { work: catchUpWork } = await server.ops.takeTimings();
  return {
    clients,
    memories: texts.length,
    perSecond: round(texts.length / (wallMs / 1000), 0),
    wallMs: round(wallMs, 0),
    latency: summarize(latencies),
    afterIngest,
    catchUpMs: round(catchUpMs, 0),
    indexBuildWaitMs: round(indexBuildWaitMs, 0),
    afterDrain,
    work: { ingest: roundWork(ingestWork), catchUp: roundWork(catchUpWork) },
    searchDuringIngest: during
      ? {
          queries: during.length,
          http: summarize(during),
          flush: pick(searches, "flushMs"),
          text: pick(searches, "textMs"),
          vector: pick(searches, "vectorMs"),
        }
      : null,
  };
}

/** One client searching back to back (cycling through `queries`) while `active()` holds. */
async function searchUntil(
  server: BenchServer,
  user: string,
  queries: string[],
  active: () => boolean,
): Promise<number[]> {
  const api = client(server.url, user);
  const latencies: number[] = [];
  for (let i = 0; active(); i++) {
    const start = performance.now();
    await api.search(queries[i % queries.length], 10);
    latencies.push(performance.now() - start);
  }
  return latencies;
}

const roundWork = (work: WorkTotals): WorkTotals =>
  Object.fromEntries(Object.entries(work).map(([k, v]) => [k, { calls: v.calls, ms: round(v.ms, 0), items: v.items }]));

const pick = (timings: SearchTiming[], key: keyof SearchTiming) => summarize(timings.map((t) => t[key]));

/** Sequential searches: `warmup` unmeasured, then `queries` measured. */
export async function measureSearch(
  server: BenchServer,
  user: string,
  queryList: string[],
  warmup: number,
): Promise<SearchResult> {
  const api = client(server.url, user);
  for (const query of queryList.slice(0, warmup)) await api.search(query, 10);
  await server.ops.takeTimings();
  const measured = queryList.slice(warmup);
  const latencies: number[] = [];
  const modes: Record<string, number> = {};
  let results = 0;
  for (const query of measured) {
    const start = performance.now();
    const response = await api.search(query, 10);
    latencies.push(performance.now() - start);
    const key = `${response.mode}/${response.strategy}`;
    modes[key] = (modes[key] ?? 0) + 1;
    results += response.results.length;
  }
  const { searches } = await server.ops.takeTimings();
  // Server records pair with client requests one to one because searches run one at a time.
  const paired = searches.length === latencies.length;
  const slowest = latencies
    .map((ms, i) => ({ query: measured[i], ms: round(ms) }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 3);
  return {
    queries: measured.length,
    http: summarize(latencies),
    httpExclEmbed: paired ? summarize(latencies.map((ms, i) => ms - searches[i].embedMs)) : null,
    engine: paired ? pick(searches, "engineMs") : null,
    flush: paired ? pick(searches, "flushMs") : null,
    embed: paired ? pick(searches, "embedMs") : null,
    text: paired ? pick(searches, "textMs") : null,
    vector: paired ? pick(searches, "vectorMs") : null,
    outsideEngine: paired ? summarize(latencies.map((ms, i) => ms - searches[i].engineMs)) : null,
    modes,
    meanResults: round(results / (measured.length || 1)),
    slowest,
  };
}

/**
 * Read-your-writes cost: the first search after `count` fresh writes must index them
 * first (the outbox is flushed for that user), so it is timed on its own.
 */
export async function measureFirstSearchAfterWrites(server: BenchServer, user: string, texts: string[], query: string) {
  await ingest(server.url, user, texts, Math.min(8, texts.length));
  const start = performance.now();
  const response = await client(server.url, user).search(query, 10);
  return { writes: texts.length, firstSearchMs: round(performance.now() - start), mode: response.mode };
}
