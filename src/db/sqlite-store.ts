import type { Database, SQLQueryBindings, Statement } from "bun:sqlite";
import { existsSync, statSync } from "node:fs";
import { translateError } from "./errors";
import type { Executor, QueryResult } from "./executor";
import type { WalSync } from "./wal-sync";

/** Prepared statements kept per SQL text; queries with long IN lists come and go. */
const STATEMENT_CACHE = 256;
/** How long a statement waits for another process (the CLI, a second server) holding the write lock. */
export const BUSY_TIMEOUT_MS = 10_000;
/** Transactions committed together at most (each waits for the group's COMMIT). */
const GROUP_MAX = 64;

interface Group {
  /** Members whose writes are in, waiting for the COMMIT. */
  members: Array<{ resolve(): void; reject(error: unknown): void }>;
  /** A member's `fn` is running. */
  running: boolean;
  commitScheduled: boolean;
}

/**
 * The embedded engine: one bun:sqlite connection, used by one caller at a time. A
 * transaction holds it from `BEGIN IMMEDIATE` to `COMMIT` and every other query waits
 * its turn (an async mutex), so interleaved async requests never share a transaction;
 * `IMMEDIATE` takes the write lock up front, so two processes (the server and the CLI)
 * never deadlock upgrading a read lock. Statements run synchronously on the connection:
 * a free connection answers without a single extra turn of the event loop.
 *
 * This talks to bun:sqlite directly rather than through Kysely's SQLite dialect: with
 * the same SQL, Kysely's per-query pipeline cost about a quarter of the embedded ingest
 * rate (README, Performance). PostgreSQL goes through Kysely (postgres-dialect.ts).
 */
export class SqliteConnection {
  /** With whether each returns rows: Bun computes `columnNames` anew on every read (7 % of an ingest's CPU). */
  private readonly statements = new Map<string, { statement: Statement; returnsRows: boolean }>();
  private locked = false;
  /** Who waits for the connection: transactions may join an open group, statements may not. */
  private readonly queue: Array<{ transaction: boolean; resume: () => void }> = [];
  /** The open group commit, if any (see `transaction`). */
  private group: Group | null = null;

  /** `wal`: makes commits durable off the event loop (wal-sync.ts); without it COMMIT itself must (synchronous = FULL). */
  constructor(
    readonly database: Database,
    private readonly wal: WalSync | null = null,
  ) {
    // A deleted row's bytes are overwritten with zeros, not left in the page's free space
    // (a deleted memory's text stayed readable in the file). Per connection, so set here,
    // where every connection of the store passes. Cost: bench/secure-delete.ts.
    database.exec("PRAGMA secure_delete = ON");
  }

  /** Runs one statement outside any transaction. */
  readonly db: Executor = {
    dialect: "sqlite",
    execute: <R>(text: string, params: unknown[]) => {
      if (!this.locked) {
        // Free: run now, synchronously, so nothing can start a transaction in between.
        try {
          return Promise.resolve(this.runNow<R>(text, params));
        } catch (error) {
          return Promise.reject(error);
        }
      }
      // Behind the group's COMMIT too: a statement never reads writes not yet acknowledged.
      return this.acquire(false).then(() => {
        try {
          return this.runNow<R>(text, params);
        } finally {
          this.release();
        }
      });
    },
  };

  /**
   * Runs `fn` atomically and resolves once its writes are durable. Transactions that
   * arrive while one runs (or within the same turn of the event loop) share one
   * `BEGIN IMMEDIATE … COMMIT`, each inside a savepoint of its own: a transaction that
   * fails rolls back to its savepoint and leaves the others' writes; none is acknowledged
   * before the COMMIT is durable, and a failed COMMIT fails them all. Each commit costs an
   * fsync of the WAL: 8 writers paying one between them instead of one each.
   */
  async transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T> {
    await this.acquire(true);
    let group = this.group;
    if (!group) {
      try {
        this.runNow("BEGIN IMMEDIATE", []);
      } catch (error) {
        this.release();
        throw error;
      }
      group = this.group = { members: [], running: false, commitScheduled: false };
    }
    let open = true;
    const tx: Executor = {
      dialect: "sqlite",
      execute: async <R>(text: string, params: unknown[]) => {
        if (!open) throw new Error("transaction handle used after its transaction ended");
        return this.runNow<R>(text, params);
      },
    };
    group.running = true;
    let result: T;
    try {
      this.runNow("SAVEPOINT member", []);
      result = await fn(tx);
      this.runNow("RELEASE member", []);
    } catch (error) {
      open = false;
      group.running = false;
      this.undoMember(group);
      this.handOn(group);
      throw error;
    }
    open = false;
    group.running = false;
    const durable = new Promise<T>((resolve, reject) => group.members.push({ resolve: () => resolve(result), reject }));
    this.handOn(group);
    return durable;
  }

  /** A failed member's writes undone; if its failure already ended the transaction (SQLITE_FULL), the group's are too. */
  private undoMember(group: Group): void {
    if (!this.database.inTransaction) {
      this.failGroup(group, new Error("the transaction was rolled back by the engine"));
      return;
    }
    try {
      this.runNow("ROLLBACK TO member", []);
      this.runNow("RELEASE member", []);
    } catch (error) {
      this.failGroup(group, error);
    }
  }

  /**
   * After a member: the next waiting transaction joins the group at once; with none
   * waiting, the COMMIT waits one turn of the event loop for requests already received
   * to join; a waiting statement, or a full group, commits now.
   */
  private handOn(group: Group): void {
    if (this.group !== group) return;
    const next = this.queue[0];
    if (next?.transaction && group.members.length < GROUP_MAX) {
      this.queue.shift();
      // Taken now: nothing else joins before the resumed transaction runs.
      group.running = true;
      next.resume();
      return;
    }
    if (next || group.members.length >= GROUP_MAX) {
      this.commit(group);
      return;
    }
    if (group.commitScheduled) return;
    group.commitScheduled = true;
    setImmediate(() => {
      group.commitScheduled = false;
      if (this.group === group && !group.running) this.commit(group);
    });
  }

  private commit(group: Group): void {
    this.group = null;
    try {
      this.runNow("COMMIT", []);
    } catch (error) {
      // A failed COMMIT (e.g. SQLITE_FULL) may already have rolled back.
      if (this.database.inTransaction) this.database.run("ROLLBACK");
      for (const member of group.members) member.reject(error);
      this.release();
      return;
    }
    if (!this.wal) {
      for (const member of group.members) member.resolve();
      this.release();
      return;
    }
    // Acknowledged once the WAL is on disk; the connection serves other statements and
    // transactions meanwhile (a later commit's fsync covers this one's frames too).
    this.release();
    this.wal.sync().then(
      () => {
        for (const member of group.members) member.resolve();
      },
      (error) => {
        for (const member of group.members) member.reject(error);
      },
    );
  }

  private failGroup(group: Group, error: unknown): void {
    this.group = null;
    if (this.database.inTransaction) this.database.run("ROLLBACK");
    for (const member of group.members) member.reject(error);
    group.members.length = 0;
    this.release();
  }

  /**
   * Copies every frame of the WAL into the database file and cuts the WAL to zero bytes,
   * so that the page images it held (a deleted row's text among them: `secure_delete`
   * zeroes the row in the page, not in the WAL's older copies of that page) leave the
   * disk. Durable commits stay durable: with `synchronous = NORMAL` SQLite syncs the WAL
   * before it checkpoints and the database file after. Waits for this connection's open
   * group to commit, never for another process (the CLI) reading or writing the file:
   * false then, and the caller tries again later.
   */
  async truncateWal(): Promise<boolean> {
    await this.acquire(false);
    try {
      const wal = `${this.database.filename}-wal`;
      if (!existsSync(wal) || statSync(wal).size === 0) return true;
      // A busy handler would block the event loop: answered at once instead.
      this.database.exec("PRAGMA busy_timeout = 0");
      try {
        const result = this.database.query("PRAGMA wal_checkpoint(TRUNCATE)").get() as { busy: number } | null;
        return result?.busy === 0;
      } catch {
        return false;
      } finally {
        this.database.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      }
    } finally {
      this.release();
    }
  }

  private acquire(transaction: boolean): Promise<void> {
    // An open group between members takes a transaction in at once.
    if (
      transaction &&
      this.group &&
      !this.group.running &&
      this.group.members.length < GROUP_MAX &&
      !this.queue.length
    ) {
      this.group.running = true;
      return Promise.resolve();
    }
    if (!this.locked) {
      this.locked = true;
      return Promise.resolve();
    }
    return new Promise<void>((resume) => this.queue.push({ transaction, resume }));
  }

  private release(): void {
    const next = this.queue.shift();
    if (next) next.resume();
    else this.locked = false;
  }

  private runNow<R>(text: string, params: unknown[]): QueryResult<R> {
    try {
      const { statement, returnsRows } = this.prepare(text);
      if (returnsRows) return { rows: statement.all(...(params as SQLQueryBindings[])) as R[], affected: 0 };
      return { rows: [], affected: statement.run(...(params as SQLQueryBindings[])).changes };
    } catch (error) {
      throw translateError(error);
    }
  }

  private prepare(text: string): { statement: Statement; returnsRows: boolean } {
    let prepared = this.statements.get(text);
    if (prepared) {
      // Refresh its place: the map's order is the eviction order.
      this.statements.delete(text);
    } else {
      const statement = this.database.prepare(text);
      prepared = { statement, returnsRows: statement.columnNames.length > 0 };
      if (this.statements.size >= STATEMENT_CACHE) {
        const [oldest, evicted] = this.statements.entries().next().value!;
        this.statements.delete(oldest);
        evicted.statement.finalize();
      }
    }
    this.statements.set(text, prepared);
    return prepared;
  }

  close(): void {
    // Members waiting between turns are committed (and acknowledged), not dropped.
    if (this.group && !this.group.running) this.commit(this.group);
    for (const { statement } of this.statements.values()) statement.finalize();
    this.statements.clear();
    this.database.close();
    this.wal?.close();
  }
}
