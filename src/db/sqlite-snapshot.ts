import { Database } from "bun:sqlite";

/**
 * A consistent online copy of a SQLite store into `target` (a new file): `VACUUM INTO`
 * copies the database as of one read transaction while a server keeps writing (WAL),
 * compacted.
 */
export function snapshotSqlite(source: string, target: string): void {
  const db = new Database(source, { readonly: true });
  try {
    db.exec("PRAGMA busy_timeout = 10000");
    db.run("VACUUM INTO ?", [target]);
  } finally {
    db.close();
  }
}
