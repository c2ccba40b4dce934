import * as lancedb from "@lancedb/lancedb";
import { withinTime } from "./filters";
import { TEXT_BOOSTS, TEXT_COLUMNS, type RawHit } from "./lance-schema";

/** HNSW search breadth: candidates examined per query (recall against exact search vs speed). */
const VECTOR_EF = 96;
/**
 * The index ranks by quantized vectors; the best `limit × VECTOR_REFINE` candidates are
 * re-ranked by their exact distances. ×2 buys recall for a little latency
 * (docs/performance.md#vector-index-recall).
 */
const VECTOR_REFINE = 2;
/**
 * What a search reads back: the keys only. Text, workspace and time come from the store
 * of record, which every hit is read back from anyway. Every column read costs a random
 * read per hit, whatever its type (docs/performance.md#why-the-code-is-tuned-as-it-is). A memory table holds one kind, whose item is its source:
 * one column says it all.
 */
const HIT_COLUMNS = { memories: ["item_id"], mixed: ["kind", "source_id", "item_id"] };

/** A query of one table, as LanceDB's builders give it, before its columns and limit. */
export type TableQuery = lancedb.Query | lancedb.VectorQuery;
/** The column a query ranks by (none: a filter alone). */
export type RankColumn = "_score" | "_distance" | null;

/**
 * BM25 over the text column, or over text and context when the table has context (without
 * it, the context columns score 0 for every row: a match on the text column alone gives
 * the same scores, faster than a multi-column match, which costs as much with one column
 * as with three). `fast`: LanceDB skips the rows outside the full-text index.
 */
export function textQuery(
  table: lancedb.Table,
  query: string,
  where: string | null,
  o: { context: boolean; fast: boolean },
): lancedb.Query {
  const match = o.context
    ? new lancedb.MultiMatchQuery(query, TEXT_COLUMNS, { boosts: TEXT_BOOSTS })
    : new lancedb.MatchQuery(query, TEXT_COLUMNS[0]);
  const search = table.search(match, "fts") as lancedb.Query;
  if (where) search.where(where);
  if (o.fast) search.fastSearch();
  return search;
}

/**
 * Cosine distance to `vector` in `column`: through the column's ANN index once one exists
 * (rows added since are searched exactly and merged), or exact with `exact`.
 */
export function vectorQuery(
  table: lancedb.Table,
  column: "vector" | "wvec",
  vector: Float32Array,
  where: string | null,
  exact = false,
): lancedb.VectorQuery {
  // A typed array goes to LanceDB as raw bytes; a JS array would be converted element by element.
  let query = table.vectorSearch(vector).column(column).distanceType("cosine");
  query = exact ? query.bypassVectorIndex() : query.ef(VECTOR_EF).refineFactor(VECTOR_REFINE);
  return where ? query.where(where) : query;
}

/** Rows created within a time range (ms since the epoch, half-open), within `where`. */
export const timeRangeQuery = (table: lancedb.Table, where: string | null, from: number, to: number) =>
  table.query().where(withinTime(where, from, to));

/** The best `limit` hits of a query, with their keys (and rank); a memory table's completed (kind and source implied). */
export async function readHits(
  query: TableQuery,
  limit: number,
  rank: RankColumn,
  memories: boolean,
): Promise<RawHit[]> {
  const columns = memories ? HIT_COLUMNS.memories : HIT_COLUMNS.mixed;
  const rows = (await query
    .select(rank ? [...columns, rank] : [...columns])
    .limit(limit)
    .toArray()) as Array<Record<string, unknown>>;
  if (!memories) return rows as RawHit[];
  return rows.map((row) => ({ ...row, kind: "memory", source_id: row.item_id }) as RawHit);
}

/**
 * Loads a table's full-text index of its text column into this process's caches, as the
 * first search of a new index version would (one query for a word, one row).
 */
export async function loadFullTextIndex(table: lancedb.Table): Promise<void> {
  await textQuery(table, "index", null, { context: false, fast: true })
    .select(["_rowaddr", "_score"])
    .limit(1)
    .toArray();
}
