import { Database, type Statement } from "bun:sqlite";
import {
  CompiledQuery, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler,
  type DatabaseConnection, type Dialect, type Driver, type Kysely, type QueryResult,
} from "kysely";
import { translateError } from "./errors";

/** Prepared statements kept per SQL text; queries with long IN lists come and go. */
const STATEMENT_CACHE = 256;

/**
 * Kysely over bun:sqlite. One connection, so one user at a time: a transaction holds it
 * from BEGIN to COMMIT and every other query waits its turn (an async mutex), which is
 * what keeps interleaved async transactions from sharing one SQLite transaction.
 * `BEGIN IMMEDIATE` takes the write lock up front, so two processes (the server and the
 * CLI) never deadlock upgrading a read lock.
 */
export function bunSqliteDialect(db: Database): Dialect {
  return {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new BunSqliteDriver(db),
    createIntrospector: (kysely: Kysely<any>) => new SqliteIntrospector(kysely),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  };
}

class BunSqliteDriver implements Driver {
  private readonly connection: BunSqliteConnection;
  private queue: Promise<void> = Promise.resolve();
  private unlock: (() => void) | null = null;

  constructor(private readonly db: Database) {
    this.connection = new BunSqliteConnection(db);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const previous = this.queue;
    let release!: () => void;
    this.queue = new Promise<void>((resolve) => (release = resolve));
    await previous;
    this.unlock = release;
    return this.connection;
  }

  async releaseConnection(): Promise<void> {
    const release = this.unlock;
    this.unlock = null;
    release?.();
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("BEGIN IMMEDIATE"));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("COMMIT"));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    // A failed COMMIT (e.g. SQLITE_FULL) may already have rolled back.
    if (!this.db.inTransaction) return;
    await connection.executeQuery(CompiledQuery.raw("ROLLBACK"));
  }

  async destroy(): Promise<void> {
    this.connection.finalizeAll();
    this.db.close();
  }
}

class BunSqliteConnection implements DatabaseConnection {
  private readonly statements = new Map<string, Statement>();

  constructor(private readonly db: Database) {}

  private prepare(sqlText: string): Statement {
    let statement = this.statements.get(sqlText);
    if (statement) {
      // Refresh its place: the map's order is the eviction order.
      this.statements.delete(sqlText);
    } else {
      statement = this.db.prepare(sqlText);
      if (this.statements.size >= STATEMENT_CACHE) {
        const [oldest, evicted] = this.statements.entries().next().value!;
        this.statements.delete(oldest);
        evicted.finalize();
      }
    }
    this.statements.set(sqlText, statement);
    return statement;
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    try {
      const statement = this.prepare(compiled.sql);
      const parameters = compiled.parameters as any[];
      if (statement.columnNames.length > 0) return { rows: statement.all(...parameters) as R[] };
      const { changes, lastInsertRowid } = statement.run(...parameters);
      return { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
    } catch (error) {
      throw translateError(error);
    }
  }

  async *streamQuery<R>(compiled: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    const statement = this.prepare(compiled.sql);
    for (const row of statement.iterate(...(compiled.parameters as any[]))) yield { rows: [row as R] };
  }

  finalizeAll(): void {
    for (const statement of this.statements.values()) statement.finalize();
    this.statements.clear();
  }
}
