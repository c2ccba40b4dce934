import type { LanceStore } from "../lance/lance-store";
import { isVectorTable } from "../lance/partitions";

/**
 * What rows outside a table's full-text index cost, against what folding them in costs:
 * a search scans the rows written since the last compaction flat, a cost per fragment
 * plus one per row, unless it holds them among its pending items (the writer's own
 * searches: pending-index.ts), where they cost it a lookup per row in memory instead; a
 * compaction costs a fixed part plus one per row of the table (the index is rewritten). A
 * table is compacted once its searches have paid what compacting it costs: rent, then
 * buy. Where replicas may share the index (a PostgreSQL store), theirs scan what the
 * writer's hold, and the writer's searches pay the scan for them. The constants below are
 * measured (docs/performance.md#why-the-code-is-tuned-as-it-is).
 */
const FLAT_FRAGMENT_SEARCH_MS = 0.3;
const FLAT_ROW_SEARCH_MS = 0.01;
const HELD_ROW_SEARCH_MS = 0.00015;
const COMPACTION_MS = 40;
const COMPACTION_MS_PER_ROW = 0.01;
/**
 * The share of a table's rows that must be outside its index, besides `bounds.unindexedRows`
 * of them (MNEMO_INDEX_MAX_UNINDEXED_ROWS), to compact it whatever its searches paid. A bulk
 * write would otherwise leave tens of thousands there, and the first search after it (of an
 * owner this process had not searched) takes each of them in before it answers
 * (pending-index.ts `follow`), some 30 µs a row; the share keeps the compactions of a
 * growing table to a number that grows with its logarithm.
 */
const OUTSIDE_SHARE = 0.1;

/** What one search scanning a table's rows outside its full-text index costs. */
const scanCost = (outside: Outside) => outside.fragments * FLAT_FRAGMENT_SEARCH_MS + outside.rows * FLAT_ROW_SEARCH_MS;

interface Outside {
  /** Fragments written since the table's last compaction (each `add` makes one). */
  fragments: number;
  /** Rows added since then: none of them is in the full-text index yet. */
  rows: number;
  /** What the searches of the table have spent on them, in ms. */
  paid: number;
}

/**
 * The sources written into a full-text table since its full-text index last covered every
 * row, as this writer knows them. `complete`: every row outside the index is one of
 * `sources` (this writer compacted or created the table since it took over); a new
 * `generation` starts at each compaction, when they are all in the index.
 */
export interface WrittenSinceIndexed {
  generation: number;
  complete: boolean;
  /** `kind|sourceId` of each source written (or deleted) since, in the order written, repeats included. */
  sources: string[];
  /** The outbox seq of each of those writes (its newest change the write reflects). */
  seqs: number[];
  /** The list grew past its bound and was given up until the next compaction. */
  capped?: boolean;
}

/** Sources listed per table at most (about 60 bytes each): a bigger backlog is scanned flat until compacted. */
const MAX_WRITTEN = 200_000;

/** Generations are never reused, even across a `clear`: a reader's old one never matches a new record. */
let lastGeneration = 0;

/**
 * The index writer's account of which tables need compacting: written since their last
 * compaction, and what that costs their searches. Kept in memory by the writing process;
 * a table it did not make or compact (written before a restart, or by the writer before a
 * takeover) is looked at once when first searched, off the search path (`inspect`), even
 * when this process wrote to it since: its commits say nothing of the rows left before.
 */
export class CompactionPolicy {
  private tables = new Map<string, Outside>();
  /** Tables whose whole state this process knows: inspected, made or compacted by it (a table is inspected once). */
  private known = new Set<string>();
  /** Full-text tables: what was written since their index last covered every row. */
  private written = new Map<string, WrittenSinceIndexed>();
  /** Tables searched but not inspected yet, or being inspected, with the searches that scanned them meanwhile (charged once their state is known). */
  private inspecting = new Map<string, number>();

  constructor(
    private readonly lance: LanceStore,
    /** Commits since the last compaction, and rows outside the index (with `OUTSIDE_SHARE` of the table), that compact a table. */
    private readonly bounds: { fragments: number; unindexedRows: number },
    /** Whether searches wait for the writer now: a compaction they paid for waits for a quiet moment. */
    private readonly searchesWaiting: () => boolean,
    /** Whether other processes (replicas) may search the index, scanning what this one's searches hold. */
    private readonly replicasScan: boolean,
  ) {}

  get hasDirtyTables(): boolean {
    return this.tables.size > 0;
  }

  dirtyTables(): string[] {
    return [...this.tables.keys()];
  }

  /** A commit of `rows` rows to a table (a delete-only commit: 0). */
  noteCommit(table: string, rows: number): void {
    const outside = this.outside(table);
    outside.fragments++;
    outside.rows += rows;
  }

  /**
   * Sources about to be written into a full-text table (called before the commit, so the
   * list holds every row outside the index at any moment, and before the rows leave the
   * outbox, so a search always finds them in one or the other).
   */
  noteWriting(table: string, sources: Map<string, number>): void {
    let record = this.written.get(table);
    if (!record) {
      record = { generation: ++lastGeneration, complete: false, sources: [], seqs: [] };
      this.written.set(table, record);
    }
    if (record.sources.length + sources.size > MAX_WRITTEN) {
      // Past the bound, searches scan the table's unindexed rows until it is compacted.
      this.written.set(table, { generation: ++lastGeneration, complete: false, sources: [], seqs: [], capped: true });
      return;
    }
    for (const [source, seq] of sources) {
      record.sources.push(source);
      record.seqs.push(seq);
    }
  }

  /** The table was created by this writer (the rows outside its index are all in its list from now on). */
  created(table: string): void {
    this.known.add(table);
    const record = this.written.get(table);
    if (record && !record.capped) record.complete = true;
  }

  /** What a search of a full-text table needs to skip its unindexed rows: null when this writer does not know them all. */
  writtenSinceIndexed(table: string): Readonly<WrittenSinceIndexed> | null {
    const record = this.written.get(table);
    return record?.complete ? record : null;
  }

  /**
   * A search of a full-text table: it scanned what lies outside the index, or (`held`)
   * held those rows among its pending items and skipped the scan. True when the writer has
   * never seen this table (the caller inspects it).
   */
  noteSearch(table: string, held: boolean): boolean {
    const outside = this.tables.get(table);
    if (outside) outside.paid += held && !this.replicasScan ? outside.rows * HELD_ROW_SEARCH_MS : scanCost(outside);
    // Not looked at yet, or being looked at: counted from the first search, since the look
    // waits its turn behind the writer's other work (a takeover's check of every table).
    else if (!this.known.has(table) || this.inspecting.has(table))
      this.inspecting.set(table, (this.inspecting.get(table) ?? 0) + 1);
    return !this.known.has(table);
  }

  /** Whether a dirty table's searches have paid enough that compacting it may be due (the writer then looks: `due`). */
  mayBeDue(table: string): boolean {
    const outside = this.tables.get(table);
    return outside !== undefined && outside.paid >= COMPACTION_MS;
  }

  /**
   * Reads the state of a table this process did not write: fragments and rows outside the
   * full-text index, left by a stop before the idle optimize or by another writer. True
   * when the table needs compacting (it is then dirty, and the idle optimize takes it).
   */
  async inspect(table: string): Promise<boolean> {
    if (this.known.has(table)) return false;
    this.known.add(table);
    if (!this.inspecting.has(table)) this.inspecting.set(table, 0);
    let state: Awaited<ReturnType<LanceStore["tidiness"]>>;
    let searched: number;
    try {
      state = await this.lance.tidiness(table);
    } finally {
      searched = this.inspecting.get(table) ?? 0;
      this.inspecting.delete(table);
    }
    // Fragments the index covers cost a search little: rows outside it are what counts.
    // (LanceDB may leave a compacted table in two fragments; they are not redone.)
    if (state?.unindexedRows === 0 && !isVectorTable(table)) this.indexedAll(table);
    if (!state || (state.unindexedRows === 0 && state.fragments < this.bounds.fragments)) return false;
    const outside = this.outside(table);
    outside.fragments = Math.max(outside.fragments, state.fragments - 1, 1);
    outside.rows = Math.max(outside.rows, state.unindexedRows);
    // The searches made while it was looked at scanned it too.
    outside.paid += searched * scanCost(outside);
    return true;
  }

  /**
   * Whether to compact a dirty table now: `force`, or once it has taken `bounds.fragments`
   * commits or holds `bounds.unindexedRows` rows and `OUTSIDE_SHARE` of its rows outside
   * the index (both bounded even in the middle of an ingest), or once its searches paid for it.
   */
  async due(table: string, force: boolean): Promise<boolean> {
    const outside = this.tables.get(table);
    if (!outside) return false;
    if (force || outside.fragments >= this.bounds.fragments) return true;
    if (outside.fragments <= 1 && outside.rows === 0) return false;
    // The table's rows, read once and only when a rule below needs them.
    let tableRows: number | undefined;
    const rowsOfTable = async () => (tableRows ??= await this.lance.countRows(table));
    if (outside.rows >= this.bounds.unindexedRows && outside.rows >= OUTSIDE_SHARE * (await rowsOfTable())) return true;
    if (outside.paid < COMPACTION_MS || this.searchesWaiting()) return false;
    return outside.paid >= COMPACTION_MS + COMPACTION_MS_PER_ROW * (await rowsOfTable());
  }

  compacted(table: string): void {
    this.known.add(table);
    this.tables.delete(table);
    if (!isVectorTable(table)) this.indexedAll(table);
  }

  /** Everything forgotten (the index was emptied for a rebuild, or another writer wrote it). */
  clear(): void {
    this.tables.clear();
    this.inspecting.clear();
    this.known.clear();
    this.written.clear();
  }

  /** Every row of a full-text table is in its index (nothing runs beside the writer's own runner). */
  private indexedAll(table: string): void {
    this.written.set(table, { generation: ++lastGeneration, complete: true, sources: [], seqs: [] });
  }

  private outside(table: string): Outside {
    let outside = this.tables.get(table);
    if (!outside) {
      outside = { fragments: 0, rows: 0, paid: 0 };
      this.tables.set(table, outside);
    }
    return outside;
  }
}
