import { Database, type Statement } from "bun:sqlite";
import { translateError } from "./errors";
import type { Executor, QueryResult } from "./executor";

/** Prepared statements kept per SQL text; queries with long IN lists come and go. */
const STATEMENT_CACHE = 256;

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
  private readonly statements = new Map<string, Statement>();
  private locked = false;
  private readonly queue: Array<() => void> = [];

  constructor(readonly database: Database) {}

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
      return this.acquire().then(() => {
        try {
          return this.runNow<R>(text, params);
        } finally {
          this.release();
        }
      });
    },
  };

  async transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T> {
    await this.acquire();
    let open = true;
    const tx: Executor = {
      dialect: "sqlite",
      execute: async <R>(text: string, params: unknown[]) => {
        if (!open) throw new Error("transaction handle used after its transaction ended");
        return this.runNow<R>(text, params);
      },
    };
    try {
      this.runNow("BEGIN IMMEDIATE", []);
      const result = await fn(tx);
      this.runNow("COMMIT", []);
      return result;
    } catch (error) {
      // A failed COMMIT (e.g. SQLITE_FULL) may already have rolled back.
      if (this.database.inTransaction) this.database.run("ROLLBACK");
      throw error;
    } finally {
      open = false;
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (!this.locked) {
      this.locked = true;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => this.queue.push(resolve));
  }

  private release(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.locked = false;
  }

  private runNow<R>(text: string, params: unknown[]): QueryResult<R> {
    try {
      const statement = this.prepare(text);
      if (statement.columnNames.length > 0) return { rows: statement.all(...(params as any[])) as R[], affected: 0 };
      return { rows: [], affected: statement.run(...(params as any[])).changes };
    } catch (error) {
      throw translateError(error);
    }
  }

  private prepare(text: string): Statement {
    let statement = this.statements.get(text);
    if (statement) {
      // Refresh its place: the map's order is the eviction order.
      this.statements.delete(text);
    } else {
      statement = this.database.prepare(text);
      if (this.statements.size >= STATEMENT_CACHE) {
        const [oldest, evicted] = this.statements.entries().next().value!;
        this.statements.delete(oldest);
        evicted.finalize();
      }
    }
    this.statements.set(text, statement);
    return statement;
  }

  close(): void {
    for (const statement of this.statements.values()) statement.finalize();
    this.statements.clear();
    this.database.close();
  }
}
