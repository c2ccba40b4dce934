import type * as lancedb from "@lancedb/lancedb";
import { numericColumns } from "./arrow-rows";
import type { RawHit } from "./lance-schema";

/**
 * Item ids of a memory table's rows by row address, kept in memory, so a full-text
 * search asks LanceDB for addresses and scores only. Reading a column back costs a
 * random read per hit, while addresses and scores come from the full-text index itself
 * (docs/performance.md#why-the-code-is-tuned-as-it-is).
 *
 * Why an address → id map can be kept: a row address is (fragment id << 32 | offset),
 * and Mnemo's tables only ever add and delete rows (never update in place): a fragment's
 * rows never change, only get deleted; compaction writes new fragments with new ids and
 * fragment ids are never reused within a table. A table dropped and created again starts
 * its fragment ids over: the store forgets a table's map when it drops or compacts it,
 * which is exact only in the process through which every write goes (the index writer;
 * see LanceStore.useRowKeysWhile).
 *
 * Unknown addresses (rows written since, a compacted fragment) are read back with the
 * search and their whole fragment is loaded in the background, off the search path.
 */
const FRAGMENT = 2 ** 32;
/** Rows kept across all tables (a uuid key costs ~40 bytes: ~40 MB), least recently used fragment dropped first. */
const DEFAULT_MAX_ROWS = 1_000_000;

/** One fragment's keys: `keys.slice(starts[offset], starts[offset + 1])`, empty for a row not seen (deleted). */
interface Fragment {
  keys: string;
  starts: Uint32Array;
  rows: number;
}

interface TableKeys {
  fragments: Map<number, Fragment>;
  loading: Set<number>;
}

export class RowKeys {
  private tables = new Map<string, TableKeys>();
  /** `table\0fragment` → rows, least recently used first. */
  private lru = new Map<string, number>();
  private rows = 0;

  constructor(private readonly maxRows = DEFAULT_MAX_ROWS) {}

  /**
   * A memory table's full-text search that reads no column: addresses and scores from
   * the index, item ids from the map; ids of rows the map does not hold yet are read back
   * by row id (from the same table: a drop or a compaction detaches the map object taken
   * here, it never changes under a search).
   */
  async search(
    name: string,
    table: lancedb.Table,
    query: ReturnType<lancedb.Table["search"]>,
    limit: number,
    score: ScoreColumn = "_score",
  ): Promise<RawHit[]> {
    const keys = this.of(name);
    const rows = await addressesAndScores(query, limit, score);
    const itemIds = rows.map((row) => this.lookup(name, keys, Number(row._rowaddr)));
    const unknown = rows.filter((_, i) => itemIds[i] === undefined);
    if (unknown.length) {
      const read = (await table
        .takeRowIds(unknown.map((row) => row._rowid))
        .select(["item_id"])
        .withRowId()
        .toArray()) as Array<{ item_id: string; _rowid: number | bigint }>;
      const byRowId = new Map(read.map((row) => [Number(row._rowid), row.item_id]));
      for (const [i, row] of rows.entries()) itemIds[i] ??= byRowId.get(Number(row._rowid));
      this.loadLater(
        name,
        table,
        keys,
        unknown.map((row) => Number(row._rowaddr)),
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
      keys = { fragments: new Map(), loading: new Set() };
      this.tables.set(name, keys);
    }
    return keys;
  }

  /** The key at `address`, or undefined when its fragment is not loaded (or the row was not there). */
  private lookup(name: string, keys: TableKeys, address: number): string | undefined {
    const fragmentId = Math.floor(address / FRAGMENT);
    const fragment = keys.fragments.get(fragmentId);
    if (!fragment) return undefined;
    const lruKey = `${name}\0${fragmentId}`;
    this.lru.delete(lruKey);
    this.lru.set(lruKey, fragment.rows);
    const offset = address - fragmentId * FRAGMENT;
    if (offset + 1 >= fragment.starts.length) return undefined;
    const start = fragment.starts[offset];
    const end = fragment.starts[offset + 1];
    return end > start ? fragment.keys.slice(start, end) : undefined;
  }

  /**
   * Loads the fragments of `addresses` in the background (one load per fragment at a
   * time). A load is dropped if the table's map was forgotten meanwhile.
   */
  private loadLater(name: string, table: lancedb.Table, keys: TableKeys, addresses: number[]): void {
    for (const fragmentId of new Set(addresses.map((a) => Math.floor(a / FRAGMENT)))) {
      if (keys.loading.has(fragmentId) || keys.fragments.has(fragmentId)) continue;
      keys.loading.add(fragmentId);
      void this.load(name, table, keys, fragmentId)
        .catch(() => {})
        .finally(() => keys.loading.delete(fragmentId));
    }
  }

  /**
   * Whether the map of a table is held: a table searched through it (the caller loads it
   * again after a compaction, which gives every row a new address: `warm`).
   */
  holds(name: string): boolean {
    return (this.tables.get(name)?.fragments.size ?? 0) > 0;
  }

  /**
   * Loads every fragment of a table in one read, off the search path: after a compaction
   * the next searches would otherwise read each hit back (`search`).
   */
  async warm(name: string, table: lancedb.Table): Promise<void> {
    const keys = this.of(name);
    const rows = (await table.query().select(["_rowaddr", "item_id"]).toArray()) as KeyRow[];
    const byFragment = new Map<number, KeyRow[]>();
    for (const row of rows) {
      const fragmentId = Math.floor(Number(row._rowaddr) / FRAGMENT);
      (byFragment.get(fragmentId) ?? byFragment.set(fragmentId, []).get(fragmentId)!).push(row);
    }
    for (const [fragmentId, ofFragment] of byFragment)
      if (!keys.fragments.has(fragmentId)) this.keep(name, keys, fragmentId, ofFragment);
  }

  private async load(name: string, table: lancedb.Table, keys: TableKeys, fragmentId: number): Promise<void> {
    const from = fragmentId * FRAGMENT;
    const rows = (await table
      .query()
      .where(`_rowaddr >= ${from} AND _rowaddr < ${from + FRAGMENT}`)
      .select(["_rowaddr", "item_id"])
      .toArray()) as KeyRow[];
    this.keep(name, keys, fragmentId, rows);
  }

  /** Holds one fragment's keys, unless the table's map was forgotten meanwhile. */
  private keep(name: string, keys: TableKeys, fragmentId: number, rows: KeyRow[]): void {
    if (this.tables.get(name) !== keys || !rows.length) return;
    const from = fragmentId * FRAGMENT;
    const byOffset = new Map<number, string>();
    for (const row of rows) byOffset.set(Number(row._rowaddr) - from, row.item_id);
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
    keys.fragments.set(fragmentId, { keys: parts.join(""), starts, rows: rows.length });
    this.lru.set(`${name}\0${fragmentId}`, rows.length);
    this.rows += rows.length;
    this.evict();
  }

  private evict(): void {
    while (this.rows > this.maxRows && this.lru.size) {
      const [lruKey, rows] = this.lru.entries().next().value!;
      this.lru.delete(lruKey);
      this.rows -= rows;
      const [name, fragmentId] = lruKey.split("\0");
      this.tables.get(name)?.fragments.delete(Number(fragmentId));
    }
  }

  /** Drops a table's map (dropped, compacted, its handle closed). */
  forget(name: string): void {
    const keys = this.tables.get(name);
    if (!keys) return;
    this.tables.delete(name);
    for (const [fragmentId, fragment] of keys.fragments) {
      if (this.lru.delete(`${name}\0${fragmentId}`)) this.rows -= fragment.rows;
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

type KeyRow = { _rowaddr: number | bigint; item_id: string };
type AddressedHit = { _rowaddr: number | bigint; _rowid: number | bigint; score: number };
/** A full-text search's BM25 score, or a vector search's distance. */
type ScoreColumn = "_score" | "_distance";

/** A query's row addresses, row ids and scores, read lean (arrow-rows.ts) or, failing that, the SDK's way. */
async function addressesAndScores(
  query: ReturnType<lancedb.Table["search"]>,
  limit: number,
  score: ScoreColumn,
): Promise<AddressedHit[]> {
  const selected = query.select(["_rowaddr", score]).withRowId().limit(limit);
  const columns = await numericColumns(selected, ["_rowaddr", score, "_rowid"], limit);
  if (!columns) {
    const rows = (await selected.toArray()) as Array<Record<string, number | bigint>>;
    return rows.map((row) => ({ _rowaddr: row._rowaddr, _rowid: row._rowid, score: Number(row[score]) }));
  }
  const [addresses, scores, rowIds] = columns;
  return Array.from(addresses, (address, i) => ({ _rowaddr: address, score: scores[i], _rowid: rowIds[i] }));
}
