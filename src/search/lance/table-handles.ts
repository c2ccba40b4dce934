import type * as lancedb from "@lancedb/lancedb";
import { releaseFreedMemory } from "../../lib/memory-trim";
import type { ScheduledTask, Scheduler } from "../../lib/scheduler";

/** An evicted handle is closed this much later, so a search still using it finishes first. */
const CLOSE_DELAY_MS = 30_000;
/** A renewed connection's handles close sooner: a search that loses its handle retries (`LanceStore.reading`). */
const RECYCLED_CLOSE_DELAY_MS = 5_000;

/** Whether LanceDB's error says that a table does not exist. */
export const isMissing = (error: unknown) => /was not found|does not exist|not found/i.test((error as Error).message);

/**
 * The open table handles of a LanceDB connection, least recently used first and bounded in
 * number (many owners, bounded memory), and the names known not to exist (a search of an
 * owner with no items), until the next refresh or write. A handle that leaves (evicted,
 * forgotten, its connection renewed) is closed later on the scheduler, so a search still
 * using it finishes first; `closeAll` closes every one at once, those waiting included.
 */
export class TableHandles {
  /** Open handles, least recently used first. */
  private tables = new Map<string, lancedb.Table>();
  private missing = new Set<string>();
  /** Writes made by another process so far (`written`). */
  private writes = 0;
  /** Handles (and connections) waiting for their deferred close, each with its timer. */
  private readonly retiring = new Set<{ task: ScheduledTask; close: () => void }>();
  /**
   * Opens under way, one a table: the searches that arrive meanwhile wait for it. Each open
   * reads the table's manifest, and 8 at once on a table just written took 23–26 ms each.
   */
  private readonly opening = new Map<
    string,
    { connection: lancedb.Connection; table: Promise<lancedb.Table | null> }
  >();
  /** Tables opened through LanceDB so far, for tests. */
  opens = 0;

  constructor(
    private readonly maxOpen: number,
    private readonly scheduler: Scheduler,
  ) {}

  get size(): number {
    return this.tables.size;
  }

  /** The open handle of `name` (opened through `connection` when needed), or null when no such table exists. */
  async open(connection: lancedb.Connection, name: string): Promise<lancedb.Table | null> {
    const cached = this.tables.get(name);
    if (cached) {
      this.tables.delete(name);
      this.tables.set(name, cached);
      return cached;
    }
    if (this.missing.has(name)) return null;
    const inFlight = this.opening.get(name);
    if (inFlight?.connection === connection) return inFlight.table;
    const entry = { connection, table: Promise.resolve<lancedb.Table | null>(null) };
    const current = () => this.opening.get(name) === entry;
    entry.table = this.openNew(connection, name, current).finally(() => {
      if (current()) this.opening.delete(name);
    });
    this.opening.set(name, entry);
    return entry.table;
  }

  /** Opens a table; the handle is kept unless a forget, drop or renewal came meanwhile (`current`). */
  private async openNew(
    connection: lancedb.Connection,
    name: string,
    current: () => boolean,
  ): Promise<lancedb.Table | null> {
    const writesBefore = this.writes;
    let table: lancedb.Table;
    try {
      this.opens++;
      table = await connection.openTable(name);
      // A write landed while it opened: the handle may hold the version before it.
      if (this.writes !== writesBefore) await table.checkoutLatest();
    } catch (error) {
      if (!isMissing(error)) throw error;
      if (this.missing.size > 10_000) this.missing.clear();
      this.missing.add(name);
      return null;
    }
    if (current()) this.remember(name, table);
    else this.closeLater(CLOSE_DELAY_MS, () => table.close());
    return table;
  }

  /** The open handle of `name`, if any, without opening one or changing its place. */
  peek(name: string): lancedb.Table | undefined {
    return this.tables.get(name);
  }

  /**
   * Another process (the writer's child) wrote to a table: it exists, and a handle being
   * opened meanwhile moves to the newest version before it is kept (the caller moves the
   * open one, `peek`).
   */
  written(name: string): void {
    this.writes++;
    this.missing.delete(name);
  }

  private remember(name: string, table: lancedb.Table): void {
    this.tables.set(name, table);
    while (this.tables.size > this.maxOpen) {
      const [oldest, handle] = this.tables.entries().next().value!;
      this.tables.delete(oldest);
      this.closeLater(CLOSE_DELAY_MS, () => handle.close());
    }
  }

  /** Drops a handle that may be stale (another process dropped the table); opened afresh on next use. */
  forget(name: string): void {
    this.opening.delete(name);
    const handle = this.tables.get(name);
    this.tables.delete(name);
    if (handle) this.closeLater(CLOSE_DELAY_MS, () => handle.close());
  }

  /** A table being dropped: its handle closes now (`dropped` then marks it missing). */
  dropping(name: string): void {
    this.opening.delete(name);
    this.tables.get(name)?.close();
    this.tables.delete(name);
  }

  dropped(name: string): void {
    this.missing.add(name);
  }

  /** The open handles by name (a refresh moves each to its newest version). */
  entries(): Array<[string, lancedb.Table]> {
    return [...this.tables];
  }

  /** Names once missing may exist now (another process wrote). */
  clearMissing(): void {
    this.missing.clear();
  }

  /**
   * The connection was renewed: its handles and the old connection close later, together,
   * and what LanceDB kept on it goes back to the operating system then (it is renewed to
   * let that memory go: lance-tables.ts `recycleConnectionAfter`).
   */
  retireAll(oldConnection: lancedb.Connection): void {
    const handles = [...this.tables.values()];
    this.tables.clear();
    this.opening.clear();
    this.closeLater(RECYCLED_CLOSE_DELAY_MS, () => {
      for (const handle of handles) handle.close();
      oldConnection.close();
      releaseFreedMemory();
    });
  }

  /** Closes every handle now, those waiting for their deferred close included. */
  closeAll(): void {
    for (const { task, close } of this.retiring) {
      task.cancel();
      close();
    }
    this.retiring.clear();
    for (const table of this.tables.values()) table.close();
    this.tables.clear();
    this.opening.clear();
    this.missing.clear();
  }

  /** Runs `close` `ms` from now, or at `closeAll`, whichever comes first. */
  private closeLater(ms: number, close: () => void): void {
    const entry = {
      task: this.scheduler.after(ms, "close LanceDB handles", () => {
        this.retiring.delete(entry);
        close();
      }),
      close,
    };
    this.retiring.add(entry);
  }
}
