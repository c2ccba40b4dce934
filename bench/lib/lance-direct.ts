/**
 * LanceDB's own full-text search, called directly (no HTTP, no Mnemo): the floor the
 * server's search is compared with in `--mode tenancy`. One table in a temp dir holding
 * the same texts (an `id` and one `text` column), one FTS index with the tokenizer of
 * src/search/lance-store.ts `fullTextIndex()`, and the same queries, limit 40 (what the
 * server asks LanceDB for at limit 10: max(20, 10 × 4)).
 */
import * as lancedb from "@lancedb/lancedb";
import { Field, Int32, Schema, Utf8 } from "apache-arrow";
import { FULL_TEXT_TOKENIZER } from "../../src/search/lance-store";
import { fullTextQuery } from "../../src/search/query-text";
import { removeDir, tempDir } from "./harness";
import { round, summarize, type Summary } from "./stats";

/** The server's own tokenizer settings, so both sides index the texts alike. */
export const FTS_CONFIG = FULL_TEXT_TOKENIZER;

/** The server's LanceDB cache sizes at their defaults (MNEMO_INDEX_CACHE_MB 256, metadata a quarter). */
const CACHE = { indexMb: 256, metadataMb: 64 };

export interface DirectSearch {
  /** Which query strings: as the server hands them to LanceDB, or as the user typed them. */
  queries: "server's" | "raw";
  measured: number;
  latency: Summary;
  meanResults: number;
  failed: number;
}

export interface DirectResult {
  rows: number;
  createMs: number;
  indexMs: number;
  limit: number;
  searches: DirectSearch[];
}

const session = () => new lancedb.Session(BigInt(CACHE.indexMb) << 20n, BigInt(CACHE.metadataMb) << 20n);

/**
 * Builds the table from `texts`, closes it and opens it again in a fresh session (as the
 * server is restarted before its searches), then runs `queries` sequentially, the first
 * `warmup` unmeasured, each in two forms: as the server sends it to LanceDB (query-text.ts
 * `fullTextQuery`: stop words and punctuation dropped) and as typed.
 */
export async function lanceDirect(texts: string[], queries: string[], warmup: number, limit = 40): Promise<DirectResult> {
  const dir = tempDir("mnemo-bench-lance-direct-");
  try {
    const schema = new Schema([new Field("id", new Int32(), false), new Field("text", new Utf8(), false)]);
    let t0 = performance.now();
    const build = await lancedb.connect(dir, {}, session());
    const created = await build.createTable("direct", texts.map((text, id) => ({ id, text })), { schema });
    const createMs = performance.now() - t0;
    t0 = performance.now();
    await created.createIndex("text", { config: lancedb.Index.fts(FTS_CONFIG) });
    const indexMs = performance.now() - t0;
    created.close();
    build.close();

    const db = await lancedb.connect(dir, {}, session());
    const table = await db.openTable("direct");
    try {
      const searches = await run(table, queries, warmup, limit);
      return { rows: texts.length, createMs: round(createMs, 0), indexMs: round(indexMs, 0), limit, searches };
    } finally {
      table.close();
      db.close();
    }
  } finally {
    removeDir(dir);
  }
}

/**
 * Each query in both forms, one after the other, the form that goes first alternating
 * (neither gains from the other warming the cache).
 */
async function run(table: lancedb.Table, queries: string[], warmup: number, limit: number): Promise<DirectSearch[]> {
  const search = (query: string) => table.search(query, "fts").select(["id", "_score"]).limit(limit).toArray();
  const kinds = ["server's", "raw"] as const;
  const forms = (query: string) => ({ "server's": fullTextQuery(query), raw: query });
  const acc = Object.fromEntries(kinds.map((k) => [k, { latencies: [] as number[], results: 0, failed: 0 }])) as Record<DirectSearch["queries"], { latencies: number[]; results: number; failed: number }>;
  for (const [i, query] of queries.entries()) {
    const form = forms(query);
    for (const kind of i % 2 ? [...kinds].reverse() : kinds) {
      const a = acc[kind];
      const start = performance.now();
      try {
        const hits = await search(form[kind]);
        if (i < warmup) continue;
        a.latencies.push(performance.now() - start);
        a.results += hits.length;
      } catch {
        // A query LanceDB's parser rejects: counted, not timed.
        a.failed++;
      }
    }
  }
  return kinds.map((kind) => {
    const a = acc[kind];
    return { queries: kind, measured: a.latencies.length, latency: summarize(a.latencies), meanResults: round(a.results / (a.latencies.length || 1)), failed: a.failed };
  });
}
