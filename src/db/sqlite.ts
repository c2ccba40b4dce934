import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Opens the store of record. WAL lets the CLI read and write while a server runs on
 * the same file; `synchronous=FULL` makes every acknowledged commit durable (the WAL
 * is fsynced at each commit), which measured at ~0.15 ms per commit here.
 */
export function openDatabase(path: string): Database {
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { create: true, strict: true });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = FULL");
  db.exec("PRAGMA foreign_keys = ON");
  // Another process (the CLI, a second server) may hold the write lock briefly.
  db.exec("PRAGMA busy_timeout = 10000");
  return db;
}

/** One schema step; `id`s sort in the order they must run (e.g. `0001_core`). */
export interface Migration {
  id: string;
  sql: string;
}

/** Applies, in id order, each migration not applied yet, each in its own transaction. */
export function migrate(db: Database, migrations: Migration[]): void {
  db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at TEXT NOT NULL)");
  const applied = new Set(db.query<{ id: string }, []>("SELECT id FROM schema_migrations").all().map((r) => r.id));
  const pending = [...migrations].sort((a, b) => a.id.localeCompare(b.id)).filter((m) => !applied.has(m.id));
  for (const migration of pending) {
    db.transaction(() => {
      db.exec(migration.sql);
      db.query("INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)").run(migration.id, new Date().toISOString());
    }).immediate();
  }
}

/**
 * Runs `fn` in a write transaction. `BEGIN IMMEDIATE` takes the write lock up front so
 * two processes never deadlock upgrading a read lock.
 */
export function writeTransaction<T>(db: Database, fn: () => T): T {
  return db.transaction(fn).immediate();
}
