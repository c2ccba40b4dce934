import * as lancedb from "@lancedb/lancedb";
import { createScheduler, type Scheduler } from "../../lib/scheduler";
import { rowsTable } from "./arrow-write";
import { runInIndexChild } from "./index-child-process";
import { itemsSchema, vectorSchema, type IndexRow, type RawHit } from "./lance-schema";
import { loadFullTextIndex, readHits, textQuery, timeRangeQuery, vectorQuery, type TableQuery } from "./lance-queries";
import type { LanceLocation } from "./index-location";
import { isMemoryTable, isVectorTable } from "./partitions";
import { rewriteWithoutDeleted } from "./rewrite";
import { LanceTables } from "./lance-tables";
import type { AddedRows } from "../../shared/index-child-protocol";

/** Rows a write adds to a memory table not searched here yet for their ids to be kept (`keysOfWrite`). */
const REPORTED_KEYS_MIN_ROWS = 64;

/**
 * A full-text table searched here this recently has its new full-text index loaded right
 * after a compaction: searches keep coming. Not every table: each load keeps memory on the
 * connection until it is renewed (`recycleConnectionAfter`), 50–80 MB more at the end of
 * `bun bench/soak.ts` when every large table was loaded after each of its compactions.
 */
const WARM_IF_SEARCHED_WITHIN_MS = 10_000;
/** Tables whose last full-text search is remembered (for `WARM_IF_SEARCHED_WITHIN_MS`), the least recent forgotten first. */
const MAX_SEARCHED_TABLES = 4_096;

/** Open table handles kept (least recently used closed first): many owners, bounded memory. */
const DEFAULT_MAX_OPEN_TABLES = 256;

export interface LanceStoreOptions {
  /** LanceDB's caches, in MB (see `open`). */
  cache?: { indexMb: number; metadataMb: number };
  /** Open table handles kept (least recently used closed first). */
  maxOpenTables?: number;
  /** Where the deferred closes of handles are timed (the app's; a store of its own without). */
  scheduler?: Scheduler;
}

/**
 * The LanceDB side of the index: each owner's tables (see partitions.ts), text with
 * full-text indices and vectors per embedding space. Only the index writer writes; every
 * write is one delete and one add per batch.
 */
export class LanceStore extends LanceTables {
  /** Tables being rewritten (`purgeDeleted`): for a moment without their full-text indices. */
  private readonly rewriting = new Set<string>();
  /** Full-text indices loaded right after their compaction (`optimize`), for tests. */
  private indexLoads = 0;
  /** When each full-text table was last searched here (ms), least recent first. */
  private readonly lastSearched = new Map<string, number>();
  /** Whether every write to the index goes through this store now (see `useRowKeysWhile`). */
  private soleWriter: () => boolean = () => false;

  /**
   * Opens the index. LanceDB's caches default to 6 GB (index) and 1 GB (metadata) and
   * keep superseded index versions after each optimize, so they are bounded here; the
   * working set (full-text postings, the HNSW graphs) fits well within.
   */
  static async open(location: LanceLocation, options: LanceStoreOptions = {}): Promise<LanceStore> {
    const {
      cache = { indexMb: 256, metadataMb: 64 },
      maxOpenTables = DEFAULT_MAX_OPEN_TABLES,
      scheduler = createScheduler(),
    } = options;
    const session = new lancedb.Session(BigInt(cache.indexMb) << 20n, BigInt(cache.metadataMb) << 20n);
    return new LanceStore(location, session, await LanceStore.connect(location, session), maxOpenTables, scheduler);
  }

  /**
   * Memory searches answer item ids from the row-id map only while `soleWriter()` holds:
   * the map is exact when every drop, compaction and write goes through this store (the
   * process holding the index lease, once it has taken over: taking over reopens the store,
   * which clears the map). A replica that only reads could see a table dropped and created again by the
   * writer before anything tells it so; it reads the item_id column back instead.
   */
  useRowKeysWhile(soleWriter: () => boolean): void {
    this.soleWriter = soleWriter;
  }

  /**
   * Replaces the rows of the given sources in a full-text table, creating it on its first
   * rows (with the full-text indices it needs: the context columns' only once it holds
   * context) and dropping it when the last row goes (a partition holds only live items).
   * Made by the writer's child process (writer-child.ts says why). True when it created the table.
   */
  async replaceItems(
    name: string,
    deleteKeys: string[],
    rows: IndexRow[],
    options: { context: boolean },
  ): Promise<boolean> {
    const added = rows.length ? await rowsTable(itemsSchema(), rows) : null;
    const keys = this.keysOfWrite(name, rows);
    const answer = await this.writer.replace(name, "items", deleteKeys, options.context, added, Boolean(keys));
    keys?.(answer.added);
    await this.written(name, answer.dropped);
    return answer.created;
  }

  /** Replaces the vectors of the given sources in a vector table (created and dropped likewise). */
  async replaceVectors(name: string, dimension: number, deleteKeys: string[], rows: IndexRow[]): Promise<void> {
    const added = rows.length
      ? await rowsTable(
          vectorSchema(dimension),
          rows.map((row) => ({ ...row, context_before: "", context_after: "" })),
        )
      : null;
    const keys = this.keysOfWrite(name, rows);
    const answer = await this.writer.replace(name, dimension, deleteKeys, false, added, Boolean(keys));
    keys?.(answer.added);
    await this.written(name, answer.dropped);
  }

  /**
   * For a write of rows to a memory table searched through its row keys: keeps the added
   * rows' ids as the writer's child reports them, so the first searches after a bulk write
   * find their hits' item ids in memory instead of reading each one back. Only for a batch
   * of `REPORTED_KEYS_MIN_ROWS` or more, or a table searched here already: a few rows cost
   * a search little to read back, and a map for each of thousands of owners' tables written
   * once would cost memory for nothing. The table's map is taken before the write: one
   * forgotten meanwhile (dropped, rewritten) keeps nothing.
   */
  private keysOfWrite(name: string, rows: IndexRow[]): ((added: AddedRows | undefined) => void) | null {
    if (!rows.length || !isMemoryTable(name) || !this.soleWriter()) return null;
    if (rows.length < REPORTED_KEYS_MIN_ROWS && !this.rowKeys.searched(name)) return null;
    const sent = rows.map((row) => row.item_id);
    const keep = this.rowKeys.expect(name);
    return (added) => {
      if (added)
        keep(
          added.rowIds.map((id, i) => ({ _rowid: id, _rowaddr: added.addresses[i], item_id: added.itemIds[i] })),
          sent,
        );
    };
  }

  /**
   * BM25 full-text search of one table, within `where` (null: every row). `indexedOnly`: the caller holds every row of the table outside its full-text index
   * itself (the index writer's process: query/pending-index.ts), so LanceDB skips the flat
   * scan of unindexed rows (docs/performance.md#why-the-code-is-tuned-as-it-is).
   */
  async searchText(
    name: string,
    where: string | null,
    query: string,
    limit: number,
    options: { context: boolean; memories: boolean; indexedOnly?: boolean } = { context: true, memories: false },
  ): Promise<RawHit[]> {
    if (!query.trim()) return [];
    this.lastSearched.delete(name);
    this.lastSearched.set(name, Date.now());
    if (this.lastSearched.size > MAX_SEARCHED_TABLES) this.lastSearched.delete(this.lastSearched.keys().next().value!);
    return this.reading(name, (table) => {
      // A fast search answers nothing from a table between its rewrite and its new index.
      const fast = Boolean(options.indexedOnly) && !this.rewriting.has(name);
      const search = textQuery(table, query, where, { context: options.context, fast });
      return this.hitsOf(name, table, search, limit, "_score", options.memories);
    });
  }

  /** Cosine-distance search of a vector table within the filter (see `vectorQuery`; `exact`: without the ANN index). */
  async searchVectors(
    name: string,
    where: string | null,
    vector: Float32Array,
    limit: number,
    options: { exact?: boolean; memories?: boolean } = {},
  ): Promise<RawHit[]> {
    return this.reading(name, (table) =>
      this.hitsOf(
        name,
        table,
        vectorQuery(table, "vector", vector, where, options.exact),
        limit,
        "_distance",
        Boolean(options.memories),
      ),
    );
  }

  /** Nearest items by word vector (the `wvec` column of a full-text table), within the filter: through its ANN index once one exists. */
  async searchWordVectors(
    name: string,
    where: string | null,
    vector: Float32Array,
    limit: number,
    options: { memories: boolean },
  ): Promise<RawHit[]> {
    return this.reading(name, (table) =>
      this.hitsOf(name, table, vectorQuery(table, "wvec", vector, where), limit, "_distance", options.memories),
    );
  }

  /** Items created within a time range (ms since the epoch, half-open), within the filter: candidates for dates in a query. */
  async searchTimeRange(
    name: string,
    where: string | null,
    from: number,
    to: number,
    limit: number,
    options: { memories: boolean },
  ): Promise<RawHit[]> {
    return this.reading(name, (table) =>
      readHits(timeRangeQuery(table, where, from, to), limit, null, options.memories),
    );
  }

  /** A ranked query's hits: a memory table's through its row keys while this process is the only writer (row-keys.ts). */
  private hitsOf(
    name: string,
    table: lancedb.Table,
    query: TableQuery,
    limit: number,
    rank: "_score" | "_distance",
    memories: boolean,
  ): Promise<RawHit[]> {
    if (memories && this.soleWriter()) return this.rowKeys.search(name, table, query, limit, rank);
    return readHits(query, limit, rank, memories);
  }

  /**
   * Runs a read on a table; a handle that went stale because another process dropped the
   * table (a rebuild, an emptied partition) is opened afresh once.
   */
  private async reading(name: string, read: (table: lancedb.Table) => Promise<RawHit[]>): Promise<RawHit[]> {
    for (let attempt = 0; ; attempt++) {
      const table = await this.table(name);
      if (!table) return [];
      try {
        return await read(table);
      } catch (error) {
        this.forget(name);
        if (attempt > 0) throw error;
      }
    }
  }

  async hasVectorIndex(name: string): Promise<boolean> {
    const table = await this.table(name);
    return table ? (await table.listIndices()).some((index) => index.columns.includes(vectorColumn(name))) : false;
  }

  /**
   * Builds the ANN index of a table's vectors (the embedding model's in a vector table, the
   * word vectors in a full-text table): HNSW graphs over scalar-quantised vectors
   * (IVF_HNSW_SQ), one partition per ~250k rows, in a child process (index-child.ts says
   * why); the handle is reopened to see it. Seconds of work on 100k rows: the caller runs it
   * beside the text stage, never in front of it.
   */
  async createVectorIndex(name: string): Promise<void> {
    const table = await this.table(name);
    if (!table) return;
    const rows = await table.countRows();
    await runInIndexChild(
      {
        op: "vector-index",
        location: { uri: this.location.uri, storageOptions: this.location.storageOptions },
        table: name,
        column: vectorColumn(name),
        hnsw: { numPartitions: Math.max(1, Math.round(rows / 250_000)), m: 16, efConstruction: 150 },
      },
      this.builds,
    );
    this.forget(name);
  }

  /** A table's fragments and the rows its text column's full-text index does not cover yet (null: no such table), read by the writer's child. */
  tidiness(name: string): Promise<{ fragments: number; unindexedRows: number } | null> {
    return this.writer.tidiness(name);
  }

  async countRows(name: string, filter?: string | null): Promise<number> {
    const table = await this.table(name);
    return table ? table.countRows(filter ?? undefined) : 0;
  }

  /**
   * Compacts tables and brings their full-text indices up to date, in the writer's child
   * process (writer-child.ts `optimize` says why), removing versions older than `keepMs`.
   * The handles are reopened to see the new versions; a table's row keys stay when its row
   * ids are stable, and go otherwise (they were the old fragments' addresses).
   */
  async optimize(names: string[], keepMs: number): Promise<void> {
    if (!names.length) return;
    // Afterwards, off the search path: memory tables searched through row keys that are
    // addresses get them again (every row moved; stable row ids stay as they were), and
    // full-text tables being searched have their new full-text index loaded.
    // The first query of an index version loads it: about 5 ms more than the next ones
    // on an idle machine, 40–90 ms each for eight searches at once beside a writer
    // (docs/performance.md#why-the-code-is-tuned-as-it-is).
    const searched = names.filter((name) => this.rowKeys.needsWarming(name));
    try {
      await this.writer.optimize(names, keepMs);
    } finally {
      for (const name of names) {
        this.handles.forget(name);
        this.rowKeys.compacted(name);
      }
      // Each table opened again afterwards loads its new index through this connection.
      this.indexUpdatesSinceRecycle += names.length;
    }
    for (const name of names) {
      const keys = searched.includes(name);
      const index = Date.now() - (this.lastSearched.get(name) ?? 0) <= WARM_IF_SEARCHED_WITHIN_MS;
      // Any other table stays unopened: LanceDB keeps memory for every table a process opens.
      if (!keys && !index) continue;
      const warming: Promise<void> = this.table(name)
        .then(async (table) => {
          if (!table) return;
          if (keys) await this.rowKeys.warm(name, table);
          if (index) {
            await loadFullTextIndex(table);
            this.indexLoads++;
          }
        })
        .catch(() => {})
        .finally(() => this.warming.delete(warming));
      this.warming.add(warming);
    }
  }

  /** How many full-text indices were loaded right after their compaction, so far (for tests). */
  get fullTextIndexLoads(): number {
    return this.indexLoads;
  }

  /**
   * Rewrites a table without the bytes of its deleted rows and removes its older versions
   * (rewrite.ts; `sole`: whether this process still is the index's only writer); a table
   * left with no row is dropped. True when its ANN index went with the rewrite.
   */
  async purgeDeleted(name: string, sole: () => boolean): Promise<boolean> {
    const table = await this.table(name);
    if (!table) return false;
    this.rewriting.add(name);
    let rewritten: Awaited<ReturnType<typeof rewriteWithoutDeleted>>;
    try {
      rewritten = await rewriteWithoutDeleted(table, sole);
    } finally {
      this.rewriting.delete(name);
    }
    const { rows, vectorIndexDropped } = rewritten;
    this.rowKeys.forget(name);
    this.indexUpdatesSinceRecycle++;
    if (rows === 0) await this.dropTable(name);
    return vectorIndexDropped;
  }
}

/** The column a table's ANN index is on: the embedding model's vectors, or a full-text table's word vectors. */
const vectorColumn = (name: string) => (isVectorTable(name) ? "vector" : "wvec");
