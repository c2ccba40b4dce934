/**
 * What a bench may ask of a running server beyond HTTP: index state, a timed drain,
 * timings of the search pipeline, RSS. The same handlers serve an in-process server and
 * the child process of `server-child.ts`.
 *
 * Timings come from wrapping methods of the live service objects (measurement only;
 * the server's code is not changed). Per-search records assume one search at a time,
 * which is how the latency phase of the benches runs.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { dataPaths } from "../../src/data-paths";
import { isVectorTable, textTable } from "../../src/search/lance/partitions";
import type { Logger } from "../../src/lib/log";
import type { RunningServer } from "../../src/server";

/** One search through the engine, split into its stages (milliseconds). */
export interface SearchTiming {
  engineMs: number;
  flushMs: number;
  embedMs: number;
  textMs: number;
  vectorMs: number;
}

/** Time spent by the indexer's writes and by document embedding. */
export interface WorkTotals {
  [stage: string]: { calls: number; ms: number; items: number };
}

export interface IndexState {
  items: TableState | null;
  vectors: TableState | null;
  vectorTable: string | null;
  outbox: { pendingText: number; pendingVector: number };
  lanceMB: number;
  log: { warn: number; error: number };
  /** Instrumentation that did not apply to this server build. */
  unwrapped: string[];
  rssMB: number;
  peakRssMB: number | null;
}

export interface TableState {
  rows: number;
  fragments: number;
  smallFragments: number;
  versions: number;
  indices: Array<{ name: string; type: string; indexed: number; unindexed: number; parts: number | null }>;
}

export type Ops = ReturnType<typeof createOps>;

/** Counts the server's warnings and errors; echoes the first few to stderr. */
export function createCountingLogger(echo = 10): Logger & { counts: { warn: number; error: number }; first: string[] } {
  const counts = { warn: 0, error: 0 };
  const first: string[] = [];
  const emit =
    (level: "warn" | "error") =>
    (message: string, fields: Record<string, unknown> = {}) => {
      counts[level]++;
      if (first.length >= echo) return;
      const detail = Object.entries(fields)
        .map(([k, v]) => `${k}=${v instanceof Error ? v.message : JSON.stringify(v)}`)
        .join(" ");
      const line = `${level.toUpperCase()} ${message}${detail ? ` ${detail}` : ""}`;
      first.push(line);
      process.stderr.write(`[server] ${line}\n`);
    };
  // MNEMO_BENCH_DEBUG=<text>: the server's debug lines holding it go to stderr (e.g. "search timings").
  const wanted = process.env.MNEMO_BENCH_DEBUG;
  const debug = (message: string, fields: Record<string, unknown> = {}) => {
    if (!wanted || !message.includes(wanted)) return;
    process.stderr.write(`[server] DEBUG ${message} ${JSON.stringify(fields)}\n`);
  };
  return { counts, first, debug, info: () => {}, warn: emit("warn"), error: emit("error") };
}

// The wrapped objects are the server's own; their methods are looked up per call.
type Callable = (...args: any[]) => Promise<any>;
/** Names of methods that could not be wrapped (the server changed): their timings read 0. */
const unwrapped: string[] = [];
function wrap(
  target: object,
  name: string,
  around: (call: () => Promise<unknown>, args: unknown[]) => Promise<unknown>,
): void {
  const holder = target as Record<string, Callable>;
  if (typeof holder[name] !== "function") {
    unwrapped.push(`${target.constructor?.name ?? "object"}.${name}`);
    return;
  }
  const original = holder[name].bind(target);
  holder[name] = (...args: unknown[]) => around(() => original(...args), args);
}

async function measure<T>(call: () => Promise<T>, done: (ms: number) => void): Promise<T> {
  const start = performance.now();
  try {
    return await call();
  } finally {
    done(performance.now() - start);
  }
}

function directoryBytes(dir: string): number {
  let total = 0;
  let entries: string[] = [];
  try {
    entries = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const path = join(dir, entry);
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) continue;
    total += stat.isDirectory() ? directoryBytes(path) : stat.size;
  }
  return total;
}

function peakRssMB(): number | null {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
    return match ? Math.round(Number(match[1]) / 1024) : null;
  } catch {
    return null;
  }
}

export function createOps(server: RunningServer, log: ReturnType<typeof createCountingLogger>) {
  const { services } = server;
  let current: SearchTiming | null = null;
  let searches: SearchTiming[] = [];
  let work: WorkTotals = {};
  const addWork = (stage: string, ms: number, items: number) => {
    work[stage] ??= { calls: 0, ms: 0, items: 0 };
    const entry = work[stage];
    entry.calls++;
    entry.ms += ms;
    entry.items += items;
  };

  wrap(services.engine, "search", async (call) => {
    const record: SearchTiming = { engineMs: 0, flushMs: 0, embedMs: 0, textMs: 0, vectorMs: 0 };
    current = record;
    try {
      return await measure(call, (ms) => (record.engineMs = ms));
    } finally {
      searches.push(record);
      current = null;
    }
  });
  wrap(services.indexer, "flush", (call) => {
    const record = current;
    return measure(call, (ms) => {
      if (record) record.flushMs += ms;
    });
  });
  if (services.embedder) {
    wrap(services.embedder, "embed", (call, args) => {
      const [texts, purpose] = args as [string[], string];
      const record = purpose === "query" ? current : null;
      return measure(call, (ms) => {
        if (record) record.embedMs += ms;
        else addWork(`embed:${purpose}`, ms, texts.length);
      });
    });
  }
  wrap(services.search.internals.lance, "searchText", (call) => {
    const record = current;
    return measure(call, (ms) => {
      if (record) record.textMs += ms;
    });
  });
  wrap(services.search.internals.lance, "searchVectors", (call) => {
    const record = current;
    return measure(call, (ms) => {
      if (record) record.vectorMs += ms;
    });
  });
  wrap(services.search.internals.lance, "replaceItems", (call, args) =>
    measure(call, (ms) => addWork("lance:replaceItems", ms, (args[1] as unknown[]).length)),
  );
  wrap(services.search.internals.lance, "replaceVectors", (call, args) =>
    measure(call, (ms) => addWork("lance:replaceVectors", ms, (args[3] as unknown[]).length)),
  );
  wrap(services.search.internals.lance, "createVectorIndex", (call, args) =>
    measure(call, (ms) => addWork(`lance:createVectorIndex(${String(args[0]).slice(0, 12)})`, ms, 0)),
  );
  wrap(services.search.internals.lance, "optimize", (call, args) =>
    measure(call, (ms) => addWork(`lance:optimize(${String(args[0]).slice(0, 12)})`, ms, 0)),
  );

  async function tableState(name: string | null): Promise<TableState | null> {
    if (!name) return null;
    const table = await services.search.internals.lance.table(name);
    if (!table) return null;
    const stats = await table.stats();
    const indices = [];
    for (const index of await table.listIndices()) {
      const s = await table.indexStats(index.name);
      indices.push({
        name: index.name,
        type: index.indexType,
        indexed: s?.numIndexedRows ?? 0,
        unindexed: s?.numUnindexedRows ?? 0,
        parts: s?.numIndices ?? null,
      });
    }
    return {
      rows: stats.numRows,
      fragments: stats.fragmentStats.numFragments,
      smallFragments: stats.fragmentStats.numSmallFragments,
      versions: (await table.listVersions()).length,
      indices,
    };
  }

  return {
    async state(ownerId: string): Promise<IndexState> {
      const vectorTable = services.search.internals.indexer.vectorTableFor(ownerId, "mem");
      const stats = await services.indexer.stats();
      return {
        items: await tableState(textTable(ownerId, "mem")),
        vectors: await tableState(vectorTable),
        vectorTable,
        outbox: { pendingText: stats.pendingText, pendingVector: stats.pendingVector },
        lanceMB: Math.round(directoryBytes(dataPaths(services.config.dataDir).lance) / 2 ** 20),
        log: { ...log.counts },
        unwrapped: [...unwrapped],
        rssMB: Math.round(process.memoryUsage().rss / 2 ** 20),
        peakRssMB: peakRssMB(),
      };
    },
    /** LanceDB table handles open now (bounded by the store's cap) and the index's tables, by kind. */
    async lanceTables(): Promise<{ open: number; total: number; vector: number }> {
      const names = await services.search.internals.lance.tableNames();
      return {
        open: services.search.internals.lance.openTableCount,
        total: names.length,
        vector: names.filter(isVectorTable).length,
      };
    },
    /** Waits for both outbox stages to empty; returns the milliseconds it took. */
    async drain(): Promise<number> {
      const start = performance.now();
      await services.indexer.drain();
      return performance.now() - start;
    },
    /**
     * Waits for a background vector-index build (when one runs), then for the idle
     * optimize; returns the milliseconds waited.
     */
    async settle(): Promise<number> {
      const start = performance.now();
      await services.indexer.vectorIndexSettled();
      // What the indexer does by itself 5 s after writes stop: compact and fold every new
      // row into the indices. Searches after this measure the steady state.
      await services.indexer.settle();
      return performance.now() - start;
    },
    /**
     * Compacts the tables and folds new rows into their indices, as the indexer's own
     * idle optimize does after a quiet spell (diagnostics: steady state without waiting).
     */
    async compact(): Promise<number> {
      const start = performance.now();
      await services.search.internals.lance.optimize(await services.search.internals.lance.tableNames(), 60_000);
      return performance.now() - start;
    },
    /** Search timings and indexer work since the last call, then resets them. */
    takeTimings(): { searches: SearchTiming[]; work: WorkTotals } {
      const taken = { searches, work };
      searches = [];
      work = {};
      return taken;
    },
    /**
     * recall@k of the server's own vector search (its index and search parameters) against
     * an exact scan of the same table and filter, for one owner's queries.
     */
    async vectorIndexRecall(ownerId: string, queries: string[], k: number) {
      const name = services.search.internals.indexer.vectorTableFor(ownerId, "mem");
      const table = name ? await services.search.internals.lance.table(name) : null;
      if (!name || !table || !services.embedder) return null;
      const indexed = (await table.listIndices()).filter((i) => i.columns.includes("vector")).map((i) => i.indexType);
      const where = null;
      let found = 0;
      let foundTieAware = 0;
      let wanted = 0;
      for (const query of queries) {
        const [vector] = await services.embedder.embed([query], "query");
        const approx = await services.search.internals.lance.searchVectors(name, where, vector, k);
        // Exact neighbours beyond k give the true distance of near-ties too.
        const exact = await table
          .vectorSearch(Array.from(vector))
          .distanceType("cosine")
          .bypassVectorIndex()
          .select(["item_id", "_distance"])
          .limit(k + 50)
          .toArray();
        const top = exact.slice(0, k);
        const kth = (top[top.length - 1]?._distance as number | undefined) ?? Infinity;
        const exactDistance = new Map(exact.map((row) => [row.item_id as string, row._distance as number]));
        const approxKeys = new Set(approx.map((row) => row.item_id));
        found += top.filter((row) => approxKeys.has(row.item_id as string)).length;
        foundTieAware += Math.min(
          top.length,
          approx.filter((row) => (exactDistance.get(row.item_id) ?? Infinity) <= kth + 1e-6).length,
        );
        wanted += top.length;
      }
      return {
        vectorIndex: indexed.length ? indexed.join(",") : "none (exact search)",
        recallAtK: wanted ? found / wanted : null,
        /** An ANN hit counts when its exact distance ties the k-th exact one (the fake embedder's vectors tie often). */
        recallAtKTieAware: wanted ? foundTieAware / wanted : null,
        queries: queries.length,
        k,
      };
    },
  };
}
