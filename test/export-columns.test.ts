import { expect, test } from "bun:test";
import { migrate } from "../src/db/migrate";
import { openStoreFor } from "../src/db/open";
import { all, sql, type Store } from "../src/db/store";
import { allMigrations } from "../src/migrations";
import { TABLES } from "../src/transfer/tables";
import { databaseUrlFor, dropDatabaseFor } from "./helpers/database";
import { tempDir } from "./helpers/server";

/*
 * A user's export copies each owned table by the column list its repository declares
 * (`OwnedTable`). A column a migration adds but the list leaves out would silently stay
 * behind on export and be lost on import; this compares the lists with the migrated schema.
 */

/** Stored columns an export leaves out on purpose, and why. */
const NOT_EXPORTED: Record<string, string[]> = {
  // Every table: `seq` is the insertion order, which an import rebuilds by appending in export order.
  "*": ["seq"],
  // Derived from the content on import (the exact-duplicate key).
  memories: ["content_key"],
  // The text extraction's progress in this data dir; the extracted text itself is exported (file_blocks).
  files: ["text_claimed_until", "text_reason", "text_status"],
};

async function columnsOf(store: Store, table: string): Promise<string[]> {
  const rows =
    store.dialect === "postgres"
      ? await all<{ name: string }>(
          store.db,
          sql`SELECT column_name AS name FROM information_schema.columns WHERE table_name = ${table} AND table_schema = current_schema()`,
        )
      : await all<{ name: string }>(store.db, sql`SELECT name FROM pragma_table_info(${table})`);
  return rows.map((r) => r.name).sort();
}

test("every stored column of an exported table is in its repository's export list, or left out on purpose", async () => {
  const dataDir = tempDir();
  const store = openStoreFor({ databaseUrl: await databaseUrlFor(dataDir) }, dataDir);
  try {
    await migrate(store, allMigrations);
    const found: Record<string, { missing: string[]; unknown: string[] }> = {};
    const expected: typeof found = {};
    for (const spec of TABLES) {
      const stored = await columnsOf(store, spec.table);
      const skipped = [...NOT_EXPORTED["*"], ...(NOT_EXPORTED[spec.table] ?? [])];
      found[spec.table] = {
        missing: stored.filter((column) => !spec.columns.includes(column) && !skipped.includes(column)),
        unknown: spec.columns.filter((column) => !stored.includes(column)),
      };
      expected[spec.table] = { missing: [], unknown: [] };
    }
    expect(found).toEqual(expected);
  } finally {
    await store.close();
    await dropDatabaseFor(dataDir);
  }
});
