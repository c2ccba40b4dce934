import * as lancedb from "@lancedb/lancedb";
import type { Dir } from "node:fs";
import { opendir } from "node:fs/promises";
import type { Scheduler } from "../../lib/scheduler";
import type { LanceLocation } from "./index-location";
import { RowKeys } from "./row-keys";
import { isMissing, TableHandles } from "./table-handles";
import { WriterChild } from "./writer-child-process";

/**
 * The index's LanceDB connection and its tables' handles, and what a store knows of the
 * tables (row keys, full-text indices), kept true across reconnects, drops and a close:
 * the part of LanceStore (lance-store.ts) that every read and write stands on.
 */
export class LanceTables {
  /** Open handles, bounded, closed later when they leave (table-handles.ts). */
  protected readonly handles: TableHandles;
  /** Item ids of memory tables by row id: searches read no column back. */
  protected readonly rowKeys = new RowKeys();
  /** What a compaction has loaded afterwards (row keys, a new full-text index: `optimize`), awaited by `close`. */
  protected readonly warming = new Set<Promise<void>>();
  /** Index child processes running (ANN builds), stopped with the store. */
  protected readonly builds = new Set<{ kill(): void }>();
  /** The child process that makes every write of the index (writer-child.ts says why). */
  protected readonly writer: WriterChild;

  protected constructor(
    protected readonly location: LanceLocation,
    private readonly session: lancedb.Session,
    private connection: lancedb.Connection,
    maxOpenTables: number,
    scheduler: Scheduler,
  ) {
    this.handles = new TableHandles(maxOpenTables, scheduler);
    this.writer = new WriterChild(
      { uri: location.uri, storageOptions: location.storageOptions },
      scheduler,
      this.builds,
    );
  }

  protected static connect(location: LanceLocation, session: lancedb.Session): Promise<lancedb.Connection> {
    return lancedb.connect(
      location.uri,
      { storageOptions: location.storageOptions, readConsistencyInterval: location.readConsistencySeconds },
      session,
    );
  }

  get uri(): string {
    return this.location.uri;
  }

  /** Resolves once what the compactions so far load afterwards is loaded (for tests and benches). */
  async warmed(): Promise<void> {
    while (this.warming.size) await Promise.all(this.warming);
  }

  /** How many table handles are open now (bounded by the cap). */
  get openTableCount(): number {
    return this.handles.size;
  }

  /** The writer's child processes started so far, for tests. */
  get writerChildrenStarted(): number {
    return this.writer.started;
  }

  /** Tables opened through LanceDB so far (concurrent searches of a table share one open), for tests. */
  get tableOpens(): number {
    return this.handles.opens;
  }

  /** Drops cached handles and reconnects: another process may have rebuilt the tables. */
  async reopen(): Promise<void> {
    await Promise.all(this.warming);
    await this.writer.stop();
    await this.renewConnection();
    this.handles.clearMissing();
    this.forgetTables();
  }

  /**
   * The new connection first: a search meanwhile keeps the old one, and the old one and its
   * handles close later, so searches still using them finish first.
   */
  private async renewConnection(): Promise<void> {
    const old = this.connection;
    this.connection = await LanceTables.connect(this.location, this.session);
    this.handles.retireAll(old);
  }

  /** Stops the index child processes and forgets what was known of the tables' row keys and full-text indices. */
  private forgetTables(): void {
    for (const build of this.builds) build.kill();
    this.builds.clear();
    this.rowKeys.clear();
  }

  /**
   * A fresh connection for what comes next; the old one and its handles close later, so
   * searches still using them finish first. What this store knows of the tables stays
   * valid. LanceDB 0.39 keeps memory on a connection for every full-text index update made
   * through it (about the table's index per optimize, until the connection goes:
   * `bench/lance-fts-leak.ts`), so the index writer renews it once `updates` were made
   * through it (after every so many, and when idle after any).
   */
  async recycleConnectionAfter(updates: number): Promise<void> {
    if (this.indexUpdatesSinceRecycle < updates) return;
    await this.renewConnection();
    this.indexUpdatesSinceRecycle = 0;
  }

  /** Optimizes (full-text index updates) made through the current connection. */
  indexUpdatesSinceRecycle = 0;

  /** Moves every open table to its newest version (a reader, after the writer wrote). */
  async refresh(): Promise<void> {
    this.handles.clearMissing();
    this.rowKeys.clear();
    for (const [name, table] of this.handles.entries()) {
      try {
        await table.checkoutLatest();
      } catch {
        // Dropped by the writer (a rebuild, an emptied partition): opened again on next use.
        this.forget(name);
      }
    }
  }

  async table(name: string): Promise<lancedb.Table | null> {
    return this.handles.open(this.connection, name);
  }

  protected forget(name: string): void {
    this.rowKeys.forget(name);
    this.handles.forget(name);
  }

  /**
   * The writer's child wrote to a table (or dropped it): an open handle moves to the new
   * version before the write is acknowledged, so a search in this process that no longer
   * finds the rows pending finds them in the table.
   */
  protected async written(name: string, dropped: boolean): Promise<void> {
    if (dropped) {
      this.rowKeys.forget(name);
      this.handles.dropping(name);
      this.handles.dropped(name);
      return;
    }
    // Both at once: a handle opened from here on, or being opened, sees the write too.
    this.handles.written(name);
    const open = this.handles.peek(name);
    if (open) await open.checkoutLatest().catch(() => this.forget(name));
  }

  async tableNames(): Promise<string[]> {
    return this.connection.tableNames();
  }

  /**
   * Whether the index holds any table. On a directory, the first `<name>.lance` entry
   * answers: LanceDB's listing reads and sorts every name (55 ms at 10,000 tables), and
   * this runs on every start.
   */
  async hasTables(): Promise<boolean> {
    const { uri } = this.location;
    if (uri.includes("://") && !uri.startsWith("file://"))
      return (await this.connection.tableNames({ limit: 1 })).length > 0;
    let dir: Dir;
    try {
      dir = await opendir(uri.replace(/^file:\/\//, ""));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return false; // not made yet
      throw error;
    }
    for await (const entry of dir) if (entry.name.endsWith(".lance")) return true;
    return false;
  }

  async dropTable(name: string): Promise<void> {
    this.rowKeys.forget(name);
    this.handles.dropping(name);
    try {
      await this.connection.dropTable(name);
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
    this.handles.dropped(name);
  }

  /** Tables that exist but cannot be read (see `damaged-tables.ts`), checked in the writer's child. */
  unreadableTables(): Promise<Array<{ name: string; reason: string }>> {
    return this.writer.unreadableTables();
  }

  /** Removes every table: the index is derived, the store of record rebuilds it. */
  async dropAll(): Promise<void> {
    for (const name of await this.connection.tableNames()) await this.dropTable(name);
  }

  /**
   * Closes every handle now, those waiting for their deferred close included, once the
   * row-key loads started after a compaction are done (LanceDB refuses to close a
   * connection or table a read still uses).
   */
  async close(): Promise<void> {
    await Promise.all(this.warming);
    await this.writer.stop();
    this.forgetTables();
    this.handles.closeAll();
    this.connection.close();
  }
}
