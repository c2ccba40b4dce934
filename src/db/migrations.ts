/**
 * The store's own tables, its part of the first migration (`0001_core`, put together in
 * `src/migrations.ts` from every owner's part); a migration once released is never edited.
 */
export const storeCoreTables = `
      -- Who runs the indexer: one process at a time writes the LanceDB index.
      CREATE TABLE leases (
        name TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        expires_at INTEGER NOT NULL
      );

      CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
`;
