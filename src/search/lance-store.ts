import * as lancedb from "@lancedb/lancedb";
import { Field, FixedSizeList, Float32, Float64, List, Schema, Utf8 } from "apache-arrow";
import { whereSourceKeys } from "./filters";

/** A row as written to LanceDB. Filter columns are duplicated in every table. */
export interface IndexRow {
  source_key: string;
  owner_id: string;
  kind: string;
  source_id: string;
  item_id: string;
  workspace_id: string | null;
  session_id: string | null;
  document_type: string | null;
  meta: string[];
  created_at: number;
  text: string;
  context_before: string;
  context_after: string;
  vector?: Float32Array;
}

/** A raw hit: the row's columns plus the engine's score (`_score` BM25 or `_distance`). */
export type RawHit = Omit<IndexRow, "vector" | "meta" | "context_before" | "context_after"> & { _score?: number; _distance?: number };

/** Bump when the LanceDB layout changes: the indexer then rebuilds from SQLite. */
export const INDEX_SCHEMA_VERSION = "4";

/** Full-text columns and their weights: the item's own text counts most. */
const TEXT_COLUMNS = ["text", "context_before", "context_after"];
const TEXT_BOOSTS = [1, 0.8, 0.3];

const ITEMS_TABLE = "items";
/** HNSW search breadth: candidates examined per query (recall against exact search vs speed). */
const VECTOR_EF = 96;
/**
 * The index ranks by quantized vectors; the best `limit × VECTOR_REFINE` candidates are
 * re-ranked by their exact distances (measured: recall up, latency unchanged).
 */
const VECTOR_REFINE = 2;
const HIT_COLUMNS = ["source_key", "owner_id", "kind", "source_id", "item_id", "workspace_id", "created_at", "text"];

function filterFields(): Field[] {
  return [
    new Field("source_key", new Utf8(), false),
    new Field("owner_id", new Utf8(), false),
    new Field("kind", new Utf8(), false),
    new Field("source_id", new Utf8(), false),
    new Field("item_id", new Utf8(), false),
    new Field("workspace_id", new Utf8(), true),
    new Field("session_id", new Utf8(), true),
    new Field("document_type", new Utf8(), true),
    new Field("meta", new List(new Field("item", new Utf8(), true)), false),
    new Field("created_at", new Float64(), false),
    new Field("text", new Utf8(), false),
    new Field("context_before", new Utf8(), false),
    new Field("context_after", new Utf8(), false),
  ];
}

const itemsSchema = () => new Schema(filterFields());
const vectorSchema = (dimension: number) =>
  new Schema([...filterFields(), new Field("vector", new FixedSizeList(dimension, new Field("item", new Float32(), true)), false)]);

/** Table name of a vector space: only [a-z0-9_] survive, the dimension is part of it. */
export const vectorTableName = (spaceId: string, dimension: number) =>
  `vectors_${spaceId.toLowerCase().replace(/[^a-z0-9]+/g, "_")}_${dimension}`;

/**
 * The LanceDB side of the index: one `items` table (text + full-text index) and one
 * `vectors_<space>` table per embedding space. Only the indexer writes; every write is
 * one delete and one add per batch.
 */
/** How a process reaches the index: a directory or `s3://…`, object-storage options, refresh interval. */
export interface LanceLocation {
  uri: string;
  storageOptions?: Record<string, string>;
  /** Seconds between checks for versions written by another process (undefined: never). */
  readConsistencySeconds?: number;
}

export class LanceStore {
  private tables = new Map<string, lancedb.Table>();
  private ftsReady = false;

  private constructor(
    private readonly location: LanceLocation,
    private readonly session: lancedb.Session,
    private connection: lancedb.Connection,
  ) {}

  /**
   * Opens the index. LanceDB's caches default to 6 GB (index) and 1 GB (metadata) and
   * keep superseded index versions after each optimize, so they are bounded here; the
   * working set (full-text postings, the HNSW graph) fits well within.
   */
  static async open(location: LanceLocation, cache: { indexMb: number; metadataMb: number } = { indexMb: 256, metadataMb: 64 }): Promise<LanceStore> {
    const session = new lancedb.Session(BigInt(cache.indexMb) << 20n, BigInt(cache.metadataMb) << 20n);
    return new LanceStore(location, session, await LanceStore.connect(location, session));
  }

  private static connect(location: LanceLocation, session: lancedb.Session): Promise<lancedb.Connection> {
    return lancedb.connect(location.uri, { storageOptions: location.storageOptions, readConsistencyInterval: location.readConsistencySeconds }, session);
  }

  get uri(): string {
    return this.location.uri;
  }

  /** Drops cached handles and reconnects: another process may have rebuilt the tables. */
  async reopen(): Promise<void> {
    this.close();
    this.connection = await LanceStore.connect(this.location, this.session);
    this.ftsReady = false;
  }

  /** Moves every open table to its newest version (a reader, after waiting for the writer). */
  async refresh(): Promise<void> {
    for (const [name, table] of this.tables) {
      try {
        await table.checkoutLatest();
      } catch {
        // Dropped by the writer (a rebuild): opened again on next use.
        this.tables.delete(name);
      }
    }
  }

  async table(name: string): Promise<lancedb.Table | null> {
    const cached = this.tables.get(name);
    if (cached) return cached;
    const names = await this.connection.tableNames();
    if (!names.includes(name)) return null;
    const table = await this.connection.openTable(name);
    this.tables.set(name, table);
    return table;
  }

  private async tableOrCreate(name: string, schema: Schema): Promise<lancedb.Table> {
    const existing = await this.table(name);
    if (existing) return existing;
    const table = await this.connection.createEmptyTable(name, schema, { existOk: true });
    this.tables.set(name, table);
    return table;
  }

  itemsTable = () => this.table(ITEMS_TABLE);

  /** Replaces the rows of the given sources in `items` (delete skipped when `deleteKeys` is empty). */
  async replaceItems(deleteKeys: string[], rows: IndexRow[]): Promise<void> {
    const table = await this.tableOrCreate(ITEMS_TABLE, itemsSchema());
    if (deleteKeys.length) await table.delete(whereSourceKeys(deleteKeys));
    if (rows.length) await table.add(rows.map(({ vector: _, ...row }) => row));
    if (!this.ftsReady && rows.length) await this.ensureFullTextIndex(table);
  }

  /** Replaces the vectors of the given sources in the space's table. */
  async replaceVectors(tableName: string, dimension: number, deleteKeys: string[], rows: IndexRow[]): Promise<void> {
    const table = rows.length ? await this.tableOrCreate(tableName, vectorSchema(dimension)) : await this.table(tableName);
    if (!table) return;
    if (deleteKeys.length) await table.delete(whereSourceKeys(deleteKeys));
    if (rows.length) await table.add(rows.map((row) => ({ ...row, context_before: "", context_after: "", vector: Array.from(row.vector!) })));
  }

  private async ensureFullTextIndex(table: lancedb.Table): Promise<void> {
    await this.ensureFilterIndices(table);
    const indices = await table.listIndices();
    for (const column of TEXT_COLUMNS) {
      if (indices.some((index) => index.columns.includes(column))) continue;
      await table.createIndex(column, {
        config: lancedb.Index.fts({
          withPosition: false,
          baseTokenizer: "simple",
          language: "English",
          stem: true,
          lowercase: true,
          removeStopWords: true,
          asciiFolding: true,
        }),
      });
    }
    this.ftsReady = true;
  }

  /**
   * Every search filters on owner and kind before ranking (a prefilter); scalar indices
   * make that a lookup instead of a column scan. BTREE suits any number of owners,
   * BITMAP the handful of kinds.
   */
  private async ensureFilterIndices(table: lancedb.Table): Promise<void> {
    const indexed = new Set((await table.listIndices()).flatMap((index) => index.columns));
    if (!indexed.has("owner_id")) await table.createIndex("owner_id", { config: lancedb.Index.btree() });
    if (!indexed.has("kind")) await table.createIndex("kind", { config: lancedb.Index.bitmap() });
  }

  /** BM25 full-text search; rows not yet in the FTS index are searched too (flat). */
  async searchText(where: string, query: string, limit: number): Promise<RawHit[]> {
    if (!query.trim()) return [];
    return this.reading(ITEMS_TABLE, async (table) => {
      const match = new lancedb.MultiMatchQuery(query, TEXT_COLUMNS, { boosts: TEXT_BOOSTS });
      return (await table.search(match, "fts").where(where).select([...HIT_COLUMNS, "_score"]).limit(limit).toArray()) as RawHit[];
    });
  }

  /**
   * Runs a read on a table; a handle that went stale because another process dropped and
   * recreated the table (a rebuild by the writer) is opened afresh once.
   */
  private async reading(name: string, read: (table: lancedb.Table) => Promise<RawHit[]>): Promise<RawHit[]> {
    for (let attempt = 0; ; attempt++) {
      const table = await this.table(name);
      if (!table) return [];
      try {
        return await read(table);
      } catch (error) {
        this.tables.delete(name);
        if (attempt > 0 || !(await this.connection.tableNames()).includes(name)) {
          if (attempt > 0) throw error;
          return [];
        }
      }
    }
  }

  /**
   * Cosine-distance vector search within the filter: through the ANN index once one
   * exists (rows added since are searched exactly and merged), or exact with `exact`.
   */
  async searchVectors(tableName: string, where: string, vector: Float32Array, limit: number, options: { exact?: boolean } = {}): Promise<RawHit[]> {
    return this.reading(tableName, async (table) => {
      let query = table.vectorSearch(Array.from(vector)).distanceType("cosine");
      query = options.exact ? query.bypassVectorIndex() : query.ef(VECTOR_EF).refineFactor(VECTOR_REFINE);
      return (await query.where(where).select([...HIT_COLUMNS, "_distance"]).limit(limit).toArray()) as RawHit[];
    });
  }

  async hasVectorIndex(name: string): Promise<boolean> {
    const table = await this.table(name);
    return table ? (await table.listIndices()).some((index) => index.columns.includes("vector")) : false;
  }

  /**
   * Builds the ANN index: HNSW graphs over scalar-quantised vectors (IVF_HNSW_SQ), one
   * partition per ~250k rows. Seconds of work on 100k rows: the caller runs it beside
   * the text stage, never in front of it.
   */
  async createVectorIndex(name: string): Promise<void> {
    const table = await this.table(name);
    if (!table) return;
    const rows = await table.countRows();
    await this.ensureFilterIndices(table);
    await table.createIndex("vector", {
      replace: true,
      config: lancedb.Index.hnswSq({ distanceType: "cosine", numPartitions: Math.max(1, Math.round(rows / 250_000)), m: 16, efConstruction: 150 }),
    });
  }

  async fragmentCount(name: string): Promise<number> {
    const table = await this.table(name);
    return table ? (await table.stats()).fragmentStats.numFragments : 0;
  }

  async countRows(name: string, filter?: string): Promise<number> {
    const table = await this.table(name);
    return table ? table.countRows(filter) : 0;
  }

  /** Compacts fragments, updates indices with new rows and prunes versions older than `keepMs`. */
  async optimize(name: string, keepMs: number): Promise<void> {
    const table = await this.table(name);
    if (table) await table.optimize({ cleanupOlderThan: new Date(Date.now() - keepMs) });
  }

  async tableNames(): Promise<string[]> {
    return this.connection.tableNames();
  }

  async dropTable(name: string): Promise<void> {
    this.tables.get(name)?.close();
    this.tables.delete(name);
    if (name === ITEMS_TABLE) this.ftsReady = false;
    if ((await this.connection.tableNames()).includes(name)) await this.connection.dropTable(name);
  }

  /** Removes every table: the index is derived, SQLite rebuilds it. */
  async dropAll(): Promise<void> {
    for (const name of await this.connection.tableNames()) await this.dropTable(name);
    this.ftsReady = false;
  }

  close(): void {
    for (const table of this.tables.values()) table.close();
    this.tables.clear();
    this.connection.close();
  }

}

export { ITEMS_TABLE };
