/**
 * LanceDB's own full-text search, called directly (no HTTP, no Mnemo): the floor the
 * server's search is compared with in `--mode tenancy`. One table in a temp dir holding
 * the same texts (an `id` and one `text` column), one FTS index with the tokenizer of
 * src/search/lance/lance-schema.ts `fullTextIndex()`, and the same queries, limit 40 (what the
 * server asks LanceDB for at limit 10: max(20, 10 × 4)).
 */
import * as lancedb from "@lancedb/lancedb";
import { Field, Int32, Schema, Utf8 } from "apache-arrow";
import { FULL_TEXT_TOKENIZER } from "../../src/search/lance/lance-schema";
import { candidateQuery as fullTextQuery } from "../../src/search/analysis/analyzer";
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

/** A LanceDB session with the server's cache sizes. */
export const directSession = () => new lancedb.Session(BigInt(CACHE.indexMb) << 20n, BigInt(CACHE.metadataMb) << 20n);

/**
 * Builds the table from `texts`, closes it, then for each of two query forms opens it
 * again in a fresh session (as the server is restarted before its searches) and runs
 * `queries` sequentially, the first `warmup` unmeasured: as the server sends them to
 * LanceDB (analyzer.ts `candidateQuery`: stop words and punctuation dropped), then as
 * typed. Each form has a cold cache of its own: run one after the other on one handle,
 * the second form of a query found the first one's posting lists cached (~0.1 ms of
 * p50, more of p99, in LanceDB's favour).
 */
export async function lanceDirect(
  texts: string[],
  queries: string[],
  warmup: number,
  limit = 40,
): Promise<DirectResult> {
  const dir = tempDir("mnemo-bench-lance-direct-");
  try {
    const schema = new Schema([new Field("id", new Int32(), false), new Field("text", new Utf8(), false)]);
    let t0 = performance.now();
    const build = await lancedb.connect(dir, {}, directSession());
    const created = await build.createTable(
      "direct",
      texts.map((text, id) => ({ id, text })),
      { schema },
    );
    const createMs = performance.now() - t0;
    t0 = performance.now();
    await created.createIndex("text", { config: lancedb.Index.fts(FTS_CONFIG) });
    const indexMs = performance.now() - t0;
    created.close();
    build.close();

    const searches: DirectSearch[] = [];
    for (const form of FORMS) {
      const db = await lancedb.connect(dir, {}, directSession());
      const table = await db.openTable("direct");
      try {
        searches.push(await run(table, form, queries, warmup, limit));
      } finally {
        table.close();
        db.close();
      }
    }
    return { rows: texts.length, createMs: round(createMs, 0), indexMs: round(indexMs, 0), limit, searches };
  } finally {
    removeDir(dir);
  }
}

const FORMS = ["server's", "raw"] as const;

/** The queries in one form, sequentially. */
async function run(
  table: lancedb.Table,
  form: DirectSearch["queries"],
  queries: string[],
  warmup: number,
  limit: number,
): Promise<DirectSearch> {
  const latencies: number[] = [];
  let results = 0;
  let failed = 0;
  for (const [i, typed] of queries.entries()) {
    const query = form === "raw" ? typed : fullTextQuery(typed);
    const start = performance.now();
    try {
      const hits = await table.search(query, "fts").select(["id", "_score"]).limit(limit).toArray();
      if (i < warmup) continue;
      latencies.push(performance.now() - start);
      results += hits.length;
    } catch {
      // A query LanceDB's parser rejects: counted, not timed.
      failed++;
    }
  }
  return {
    queries: form,
    measured: latencies.length,
    latency: summarize(latencies),
    meanResults: round(results / (latencies.length || 1)),
    failed,
  };
}
