import type * as lancedb from "@lancedb/lancedb";
import { numericColumns } from "./arrow-rows";
import type { RawHit } from "./lance-schema";

/**
 * Item ids of a memory table's rows by row id, kept in memory, so a full-text search asks
 * LanceDB for row ids and scores only. Reading a column back costs a random read per
 * hit, while ids and scores come from the full-text index itself
 * (docs/performance.md#why-the-code-is-tuned-as-it-is).
 *
 * Why an id → item map can be kept: the index writer makes its tables with stable row
 * ids: LanceDB hands out each row's id from a counter and keeps it when compaction moves
 * the row, and Mnemo's tables only ever add and delete rows (never update in place). So
 * an id, once given, means one row for the table's life, across compactions, and the map
 * outlives them. A table made before (without stable ids) has row ids that are addresses
 * (fragment id << 32 | offset): they also never mean another row, but compaction moves
 * every row to new ones, so its map is forgotten at each compaction (`compacted`). Which
 * kind a table is shows in any row whose id differs from its address. A table dropped
 * and created again starts its ids over: the store forgets a table's map when it drops or
 * rewrites it, which is exact only in the process through which every write goes (the
 * index writer; see LanceStore.useRowKeysWhile).
 *
 * The map is filled as the writer's child reports the rows it adds (`expect`), and, for
 * rows written before, by reading: unknown ids are read back with the search, and their
 * whole chunk of ids is loaded in the background, off the search path.
 */
const CHUNK = 4096;
/** Rows kept across all tables (a uuid key costs ~40 bytes: ~40 MB), least recently used chunk dropped first. */
const DEFAULT_MAX_ROWS = 1_000_000;

/** One chunk's keys: `keys.slice(starts[offset], starts[offset + 1])`, empty for a row not known (deleted, or not seen yet). */
interface Chunk {
  keys: string;
  starts: Uint32Array;
  rows: number;
}

interface TableKeys {
  chunks: Map<number, Chunk>;
  loading: Set<number>;
  /** Whether a search used the map (its chunks may also come from writes: `expect`). */
  searched: boolean;
  /** Whether the table's row ids are stable (some row's id differs from its address): its map outlives compactions. */
  stable: boolean;
}

/** A row as the map takes it: its id, its address (to tell stable ids) and its item id. */
export interface KeyRow {
  _rowid: number | bigint;
  _rowaddr: number | bigint;
  item_id: string;
}

export class RowKeys {
  private tables = new Map<string, TableKeys>();
  /** `table\0chunk` → rows, least recently used first. */
  private lru = new Map<string, number>();
  private rows = 0;

  constructor(private readonly maxRows = DEFAULT_MAX_ROWS) {}

  /**
   * A memory table's full-text search that reads no column: row ids and scores from the
   * index, item ids from the map; ids the map does not hold yet are read back by row id
   * (from the same table: a drop or a rewrite detaches the map object taken here, it
   * never changes under a search).
   */
  async search(
    name: string,
    table: lancedb.Table,
    query: ReturnType<lancedb.Table["search"]>,
    limit: number,
    score: ScoreColumn = "_score",
  ): Promise<RawHit[]> {
    const keys = this.of(name);
    keys.searched = true;
    const rows = await idsAndScores(query, limit, score);
    for (const row of rows) if (row._rowid !== row._rowaddr) keys.stable = true;
    const itemIds = rows.map((row) => this.lookup(name, keys, row._rowid));
    const unknown = rows.filter((_, i) => itemIds[i] === undefined);
    if (unknown.length) {
      const read = (await table
        .takeRowIds(unknown.map((row) => row._rowid))
        .select(["item_id"])
        .withRowId()
        .toArray()) as Array<{ item_id: string; _rowid: number | bigint }>;
      const byRowId = new Map(read.map((row) => [Number(row._rowid), row.item_id]));
      for (const [i, row] of rows.entries()) itemIds[i] ??= byRowId.get(row._rowid);
      this.loadLater(
        name,
        table,
        keys,
        unknown.map((row) => row._rowid),
      );
    }
    return rows.flatMap((row, i) => {
      const itemId = itemIds[i];
      return itemId === undefined ? [] : [{ kind: "memory", source_id: itemId, item_id: itemId, [score]: row.score }];
    });
  }

  /** The map of table `name` (empty at first). */
  private of(name: string): TableKeys {
    let keys = this.tables.get(name);
    if (!keys) {
      keys = { chunks: new Map(), loading: new Set(), searched: false, stable: false };
      this.tables.set(name, keys);
    }
    return keys;
  }

  /** The key of row `rowId`, or undefined when the map does not hold it. */
  private lookup(name: string, keys: TableKeys, rowId: number): string | undefined {
    const chunkId = Math.floor(rowId / CHUNK);
    const chunk = keys.chunks.get(chunkId);
    if (!chunk) return undefined;
    const lruKey = `${name}\0${chunkId}`;
    this.lru.delete(lruKey);
    this.lru.set(lruKey, chunk.rows);
    const offset = rowId - chunkId * CHUNK;
    if (offset + 1 >= chunk.starts.length) return undefined;
    const start = chunk.starts[offset];
    const end = chunk.starts[offset + 1];
    return end > start ? chunk.keys.slice(start, end) : undefined;
  }

  /**
   * Loads the chunks of `rowIds` in the background (one load per chunk at a time). A load
   * is dropped if the table's map was forgotten meanwhile.
   */
  private loadLater(name: string, table: lancedb.Table, keys: TableKeys, rowIds: number[]): void {
    for (const chunkId of new Set(rowIds.map((id) => Math.floor(id / CHUNK)))) {
      if (keys.loading.has(chunkId)) continue;
      keys.loading.add(chunkId);
      void this.load(name, table, keys, chunkId)
        .catch(() => {})
        .finally(() => keys.loading.delete(chunkId));
    }
  }

  /** Whether a search of table `name` used the map since it was last forgotten. */
  searched(name: string): boolean {
    return this.tables.get(name)?.searched ?? false;
  }

  /**
   * Whether a table's map needs loading again after a compaction: a table searched
   * through it whose row ids are addresses (the caller loads it: `warm`).
   */
  needsWarming(name: string): boolean {
    const keys = this.tables.get(name);
    return Boolean(keys?.searched && !keys.stable && keys.chunks.size > 0);
  }

  /**
   * A table was compacted: its map stays when its row ids are stable, and is forgotten
   * when they are addresses (every row moved).
   */
  compacted(name: string): void {
    if (!this.tables.get(name)?.stable) this.forget(name);
  }

  /**
   * Before a write adds rows to table `name`: what keeps them once the writer's child
   * reports them (in the table's order), provided they are the rows sent (`sent`, item ids
   * in order) and the map was not forgotten meanwhile (a drop or a rewrite since: its ids
   * may mean other rows now).
   */
  expect(name: string): (added: KeyRow[], sent: string[]) => void {
    const keys = this.of(name);
    return (added, sent) => {
      if (added.length !== sent.length || added.some((row, i) => row.item_id !== sent[i])) return;
      this.put(name, keys, added);
    };
  }

  /** Loads every row of a table in one read, off the search path. */
  async warm(name: string, table: lancedb.Table): Promise<void> {
    const keys = this.of(name);
    keys.searched = true;
    this.put(name, keys, (await table.query().select(["_rowaddr", "item_id"]).withRowId().toArray()) as KeyRow[]);
  }

  private async load(name: string, table: lancedb.Table, keys: TableKeys, chunkId: number): Promise<void> {
    const from = chunkId * CHUNK;
    const rows = (await table
      .query()
      .where(`_rowid >= ${from} AND _rowid < ${from + CHUNK}`)
      .select(["_rowaddr", "item_id"])
      .withRowId()
      .toArray()) as KeyRow[];
    this.put(name, keys, rows);
  }

  /** Adds rows to their chunks, unless the table's map was forgotten meanwhile. */
  private put(name: string, keys: TableKeys, rows: KeyRow[]): void {
    if (this.tables.get(name) !== keys || !rows.length) return;
    const byChunk = new Map<number, Map<number, string>>();
    for (const row of rows) {
      const rowId = Number(row._rowid);
      if (rowId !== Number(row._rowaddr)) keys.stable = true;
      const chunkId = Math.floor(rowId / CHUNK);
      (byChunk.get(chunkId) ?? byChunk.set(chunkId, new Map()).get(chunkId)!).set(rowId - chunkId * CHUNK, row.item_id);
    }
    for (const [chunkId, added] of byChunk) {
      const held = keys.chunks.get(chunkId);
      if (held) {
        // What the chunk held and the new rows, together.
        for (let offset = 0; offset + 1 < held.starts.length; offset++) {
          if (added.has(offset) || held.starts[offset + 1] <= held.starts[offset]) continue;
          added.set(offset, held.keys.slice(held.starts[offset], held.starts[offset + 1]));
        }
        this.rows -= held.rows;
      }
      keys.chunks.set(chunkId, chunkOf(added));
      this.lru.delete(`${name}\0${chunkId}`);
      this.lru.set(`${name}\0${chunkId}`, added.size);
      this.rows += added.size;
    }
    this.evict();
  }

  private evict(): void {
    while (this.rows > this.maxRows && this.lru.size) {
      const [lruKey, rows] = this.lru.entries().next().value!;
      this.lru.delete(lruKey);
      this.rows -= rows;
      const [name, chunkId] = lruKey.split("\0");
      this.tables.get(name)?.chunks.delete(Number(chunkId));
    }
  }

  /** Drops a table's map (dropped, rewritten, compacted with address ids, its handle closed). */
  forget(name: string): void {
    const keys = this.tables.get(name);
    if (!keys) return;
    this.tables.delete(name);
    for (const [chunkId, chunk] of keys.chunks) {
      if (this.lru.delete(`${name}\0${chunkId}`)) this.rows -= chunk.rows;
    }
  }

  /** Rows held, for tests and the bench. */
  get size(): number {
    return this.rows;
  }

  clear(): void {
    this.tables.clear();
    this.lru.clear();
    this.rows = 0;
  }
}

/** A chunk holding the keys at these offsets (as long as its last one: a small table's chunk is small). */
function chunkOf(byOffset: Map<number, string>): Chunk {
  const length = Math.max(...byOffset.keys()) + 1;
  const starts = new Uint32Array(length + 1);
  const parts: string[] = [];
  let position = 0;
  for (let offset = 0; offset < length; offset++) {
    starts[offset] = position;
    const key = byOffset.get(offset);
    if (key !== undefined) {
      parts.push(key);
      position += key.length;
    }
  }
  starts[length] = position;
  return { keys: parts.join(""), starts, rows: byOffset.size };
}

type IdentifiedHit = { _rowaddr: number; _rowid: number; score: number };
/** A full-text search's BM25 score, or a vector search's distance. */
type ScoreColumn = "_score" | "_distance";

/** A query's row ids, addresses and scores, read lean (arrow-rows.ts) or, failing that, the SDK's way. */
async function idsAndScores(
  query: ReturnType<lancedb.Table["search"]>,
  limit: number,
  score: ScoreColumn,
): Promise<IdentifiedHit[]> {
  const selected = query.select(["_rowaddr", score]).withRowId().limit(limit);
  const columns = await numericColumns(selected, ["_rowaddr", score, "_rowid"], limit);
  if (!columns) {
    const rows = (await selected.toArray()) as Array<Record<string, number | bigint>>;
    return rows.map((row) => ({
      _rowaddr: Number(row._rowaddr),
      _rowid: Number(row._rowid),
      score: Number(row[score]),
    }));
  }
  const [addresses, scores, rowIds] = columns;
  return Array.from(addresses, (address, i) => ({
    _rowaddr: Number(address),
    score: scores[i],
    _rowid: Number(rowIds[i]),
  }));
}
