import { Database } from "bun:sqlite";
import type { Kysely } from "kysely";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { StoreOpenError, TransactionConflictError } from "./errors";
import type { Executor, StoreDialect } from "./executor";
import { sql, type Sql } from "./sql";
import { BUSY_TIMEOUT_MS, SqliteConnection } from "./sqlite-store";
import { WalSync } from "./wal-sync";

export { sql, type Sql } from "./sql";
export type { Executor, QueryResult, StoreDialect } from "./executor";

/**
 * The store of record. The same repositories run on either engine: SQL is written once
 * with `$n` placeholders, errors arrive as the types of `errors.ts`.
 */
export interface Store {
  readonly dialect: StoreDialect;
  /** Runs single statements outside a transaction. */
  readonly db: Executor;
  /**
   * Runs `fn` in one transaction and commits when it resolves. A transaction that the
   * engine aborted for a concurrent one (PostgreSQL serialization failure, deadlock)
   * runs again, so `fn` must do nothing but database work.
   */
  transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T>;
  /** Where the store lives, without credentials, for logs and `doctor`. */
  readonly location: string;
  /**
   * PostgreSQL only: a lock held by a dedicated connection, released by the server the
   * moment this process dies (its connection closes). Null on SQLite.
   */
  sessionLock(key: number): SessionLock | null;
  /**
   * SQLite: moves the WAL into the database file and cuts it to zero bytes, so that old
   * page images leave the disk (sqlite-store.ts); false when another process held it
   * (try again later). Null on PostgreSQL, whose files are not Mnemo's to manage.
   */
  readonly truncateWal: (() => Promise<boolean>) | null;
  close(): Promise<void>;
}

export interface SessionLock {
  /** Takes the lock if free; true while this process holds it and its connection is alive. */
  tryHold(): Promise<boolean>;
  release(): Promise<void>;
}

const CONFLICT_RETRIES = 3;

async function retryingConflicts<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (!(error instanceof TransactionConflictError) || attempt >= CONFLICT_RETRIES) throw error;
    }
  }
}

/**
 * The embedded store: one SQLite file. WAL lets the CLI read and write while a server
 * runs on the same file; every acknowledged commit is durable (the WAL is fsynced before
 * a commit is acknowledged, off the event loop: wal-sync.ts).
 */
export function openSqliteStore(path: string): Store {
  let database: Database;
  try {
    mkdirSync(dirname(path), { recursive: true });
    database = new Database(path, { create: true, strict: true });
    database.exec("PRAGMA journal_mode = WAL");
    // Durable at every acknowledged commit all the same: the WAL is fsynced off the event
    // loop before a commit is acknowledged (wal-sync.ts).
    database.exec("PRAGMA synchronous = NORMAL");
    // The WAL is restarted after each checkpoint (every ~4 MB written) but keeps its
    // largest size on disk unless told otherwise: cut back to 8 MB at each restart. Not
    // lower: a WAL truncated below its steady size grows again at every checkpoint, and
    // growing it costs writes (docs/performance.md#why-the-code-is-tuned-as-it-is).
    database.exec("PRAGMA journal_size_limit = 8388608");
    database.exec("PRAGMA foreign_keys = ON");
    // Reads through a memory map instead of a read() per page: a search reads its hits
    // back by id, rows at random in a table larger than SQLite's page cache
    // (docs/performance.md#why-the-code-is-tuned-as-it-is). Writes still go through the WAL.
    database.exec("PRAGMA mmap_size = 268435456");
    // Another process (the CLI, a second server) may hold the write lock briefly.
    database.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  } catch (error) {
    // Nothing is repaired or overwritten: the operator decides (restore a backup, fix permissions).
    throw new StoreOpenError(`cannot open the store of record ${path}: ${(error as Error).message}`);
  }
  const connection = new SqliteConnection(database, new WalSync(`${path}-wal`));
  return {
    dialect: "sqlite",
    db: connection.db,
    location: `sqlite:${path}`,
    transaction: (fn) => connection.transaction(fn),
    sessionLock: () => null,
    truncateWal: () => connection.truncateWal(),
    close: async () => connection.close(),
  };
}

/**
 * Kysely and the pg driver, loaded (synchronously) only when a PostgreSQL store opens: on
 * SQLite they would weigh on every light command (docs/performance.md#why-the-code-is-tuned-as-it-is).
 */
function postgresModules() {
  return {
    kysely: require("kysely") as typeof import("kysely"),
    pg: require("./postgres-dialect") as typeof import("./postgres-dialect"),
  };
}

/** Queries through Kysely, which owns PostgreSQL's pool, connections and transactions. */
function kyselyExecutor(db: Kysely<unknown>): Executor {
  const { CompiledQuery } = postgresModules().kysely;
  return {
    dialect: "postgres",
    async execute<R>(text: string, params: unknown[]) {
      const result = await db.executeQuery<R>(CompiledQuery.raw(text, params));
      return { rows: result.rows, affected: Number(result.numAffectedRows ?? 0n) };
    },
  };
}

/** The shared store: PostgreSQL, for several replicas. */
export function openPostgresStore(url: string, poolSize = 10): Store {
  const {
    kysely: { Kysely },
    pg: { createPostgresPool, createSessionLock, postgresDialect },
  } = postgresModules();
  const db = new Kysely<unknown>({ dialect: postgresDialect(createPostgresPool({ url, poolSize })) });
  return {
    dialect: "postgres",
    db: kyselyExecutor(db),
    location: redactUrl(url),
    transaction: (fn) => retryingConflicts(() => db.transaction().execute((trx) => fn(kyselyExecutor(trx)))),
    sessionLock: (key) => createSessionLock(url, key),
    truncateWal: null,
    close: () => db.destroy(),
  };
}

/** `postgres://user:secret@host/db` → `postgres://user@host/db`. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = "";
    return parsed.toString();
  } catch {
    return "postgres://(unparsable url)";
  }
}

function execute<R>(tx: Executor, query: Sql) {
  const { text, params } = query.compile();
  return tx.execute<R>(text, params);
}

/** Every row of a query. */
export async function all<R>(tx: Executor, query: Sql): Promise<R[]> {
  return (await execute<R>(tx, query)).rows;
}

/** The first row of a query, or null. */
export async function first<R>(tx: Executor, query: Sql): Promise<R | null> {
  return (await execute<R>(tx, query)).rows[0] ?? null;
}

/** Runs a statement; returns how many rows it changed. */
export async function run(tx: Executor, query: Sql): Promise<number> {
  return (await execute(tx, query)).affected;
}

/** `(a, b, c)` of bound values, for `IN` lists (callers keep lists well under engines' parameter limits). */
export const list = (values: readonly unknown[]) => sql`(${sql.join(values)})`;

/** Lists are queried in chunks of this many values. */
export const IN_CHUNK = 500;

/** Splits ids into chunks for `IN` queries. */
export function* chunks<T>(values: readonly T[], size = IN_CHUNK): Generator<T[]> {
  for (let i = 0; i < values.length; i += size) yield values.slice(i, i + size);
}

/**
 * Rows of `table` owned by `ownerId` whose `idColumn` is one of `ids`, queried in chunks
 * of bound values. `table`, `idColumn` and `columns` are code constants, never input.
 */
export async function ownedRowsByIds<R>(
  tx: Executor,
  table: string,
  ownerId: string,
  ids: readonly string[],
  { idColumn = "id", columns = "*" }: { idColumn?: string; columns?: string } = {},
): Promise<R[]> {
  const rows: R[] = [];
  for (const chunk of chunks(ids)) {
    rows.push(
      ...(await all<R>(
        tx,
        sql`SELECT ${sql.raw(columns)} FROM ${sql.table(table)} WHERE owner_id = ${ownerId} AND ${sql.raw(idColumn)} IN ${list(chunk)}`,
      )),
    );
  }
  return rows;
}

/** Rows per page when a rebuild enumerates every source (keyset pages, no long-lived cursor). */
export const KEY_PAGE = 2_000;

/**
 * Every `(owner_id, id)` of a table with a `seq` column, in keyset pages: no cursor or
 * transaction stays open between pages. `table` is a code constant, never user input.
 */
export async function* ownedKeysBySeq(
  tx: Executor,
  table: "memories" | "chat_messages",
): AsyncGenerator<{ ownerId: string; id: string }> {
  for (let after = 0; ; ) {
    const page = await all<{ seq: number; owner_id: string; id: string }>(
      tx,
      sql`SELECT seq, owner_id, id FROM ${sql.table(table)} WHERE seq > ${after} ORDER BY seq LIMIT ${KEY_PAGE}`,
    );
    for (const r of page) yield { ownerId: r.owner_id, id: r.id };
    if (page.length < KEY_PAGE) return;
    after = page[page.length - 1].seq;
  }
}
