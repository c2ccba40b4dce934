import pg from "pg";
import {
  PostgresDialect,
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from "kysely";
import { translateError } from "./errors";

// int8 (counts, sequences, millisecond times) and numeric (sums) come back as JS numbers,
// as SQLite returns them: every value we store fits well within 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (value) => Number(value));

export interface PostgresOptions {
  url: string;
  poolSize: number;
}

/** A pool to PostgreSQL; `statement_timeout` keeps one stuck query from holding a connection forever. */
export function createPostgresPool({ url, poolSize }: PostgresOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: 60_000,
  });
  // An idle client whose server went away must not crash the process; the next query reconnects.
  pool.on("error", () => {});
  // Nor a checked-out one between queries (mid-transaction): pg emits "error" on the client
  // itself, which without a listener kills the process. The pool drops it on release.
  pool.on("connect", (client) => void client.on("error", () => {}));
  return pool;
}

/**
 * A session-level advisory lock on a connection of its own. PostgreSQL releases it when
 * that connection ends — at once when the process is killed (the kernel closes its
 * socket) — so a dead holder never blocks a successor for longer than it takes to
 * notice. Each check also proves the connection is alive; a holder that cannot check
 * must assume it lost the lock.
 */
export function createSessionLock(url: string, key: number) {
  let client: pg.Client | null = null;
  let held = false;
  const drop = async () => {
    const old = client;
    client = null;
    held = false;
    await old?.end().catch(() => {});
  };
  return {
    async tryHold(): Promise<boolean> {
      try {
        if (!client) {
          client = new pg.Client({
            connectionString: url,
            keepAlive: true,
            keepAliveInitialDelayMillis: 5_000,
            connectionTimeoutMillis: 5_000,
          });
          client.on("error", () => void drop());
          await client.connect();
        }
        if (held) {
          await client.query("SELECT 1");
          return true;
        }
        const result = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1) AS ok", [key]);
        held = result.rows[0]?.ok === true;
        return held;
      } catch (error) {
        await drop();
        throw translateError(error);
      }
    },
    release: drop,
  };
}

/** Kysely's PostgreSQL dialect with engine errors mapped onto the store's error types. */
export function postgresDialect(pool: pg.Pool): Dialect {
  const inner = new PostgresDialect({ pool });
  return {
    createAdapter: () => inner.createAdapter(),
    createDriver: () => new TranslatingDriver(inner.createDriver()),
    createIntrospector: (kysely: Kysely<unknown>) => inner.createIntrospector(kysely),
    createQueryCompiler: () => inner.createQueryCompiler(),
  };
}

class TranslatingDriver implements Driver {
  constructor(private readonly inner: Driver) {}
  init = () => this.inner.init();
  destroy = () => this.inner.destroy();
  async acquireConnection(): Promise<DatabaseConnection> {
    try {
      return new TranslatingConnection(await this.inner.acquireConnection());
    } catch (error) {
      throw translateError(error);
    }
  }
  releaseConnection = (connection: DatabaseConnection) =>
    this.inner.releaseConnection((connection as TranslatingConnection).inner);
  // BEGIN, COMMIT and ROLLBACK meet a dropped connection too: the same 503, not a 500.
  beginTransaction = (connection: DatabaseConnection, settings: TransactionSettings) =>
    translated(this.inner.beginTransaction((connection as TranslatingConnection).inner, settings));
  commitTransaction = (connection: DatabaseConnection) =>
    translated(this.inner.commitTransaction((connection as TranslatingConnection).inner));
  rollbackTransaction = (connection: DatabaseConnection) =>
    translated(this.inner.rollbackTransaction((connection as TranslatingConnection).inner));
}

const translated = async (work: Promise<void>): Promise<void> => {
  try {
    await work;
  } catch (error) {
    throw translateError(error);
  }
};

class TranslatingConnection implements DatabaseConnection {
  constructor(readonly inner: DatabaseConnection) {}
  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return await this.inner.executeQuery<R>(compiled);
    } catch (error) {
      throw translateError(error);
    }
  }
  streamQuery<R>(compiled: CompiledQuery, chunkSize = 100): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(compiled, chunkSize);
  }
}
