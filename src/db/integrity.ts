import { all, first, sql, type Store } from "./store";

/**
 * What the store of record says is wrong with itself: SQLite's integrity check (its
 * first few findings), or nothing once PostgreSQL answers. Throws when the store cannot
 * be read at all.
 */
export async function integrityProblems(store: Store): Promise<string[]> {
  if (store.dialect !== "sqlite") {
    await first(store.db, sql`SELECT 1 AS one`);
    return [];
  }
  const rows = await all<{ integrity_check: string }>(store.db, sql`PRAGMA integrity_check`);
  return rows.map((r) => r.integrity_check).filter((r) => r !== "ok");
}
