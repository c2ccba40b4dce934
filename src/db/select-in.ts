import type { Database } from "bun:sqlite";

/** SQLite's default limit on bound parameters is generous, but batches stay well under it. */
const CHUNK = 500;

/**
 * Rows of `table` owned by `ownerId` whose `idColumn` is one of `ids`, queried in chunks
 * with bound parameters. `table` and `idColumn` are code constants, never user input.
 */
export function selectOwnedByIds<Row>(db: Database, table: string, idColumn: string, ownerId: string, ids: string[]): Row[] {
  const rows: Row[] = [];
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK);
    const sql = `SELECT * FROM ${table} WHERE owner_id = ? AND ${idColumn} IN (${chunk.map(() => "?").join(",")})`;
    rows.push(...db.query<Row, string[]>(sql).all(ownerId, ...chunk));
  }
  return rows;
}
