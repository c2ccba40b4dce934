import * as lancedb from "@lancedb/lancedb";
import { join } from "node:path";

/**
 * Reads the search index of a data dir directly (as a second process would), for tests
 * that compare what LanceDB holds with the store of record: every row's source key and
 * item id, so that duplicates show.
 */
export async function indexRows(dataDir: string, table = "items"): Promise<Array<{ source_key: string; item_id: string; owner_id: string }>> {
  const db = await lancedb.connect(join(dataDir, "index"));
  try {
    if (!(await db.tableNames()).includes(table)) return [];
    const handle = await db.openTable(table);
    const rows = (await handle.query().select(["source_key", "item_id", "owner_id"]).toArray()) as Array<{ source_key: string; item_id: string; owner_id: string }>;
    handle.close();
    return rows.map((r) => ({ source_key: r.source_key, item_id: r.item_id, owner_id: r.owner_id }));
  } finally {
    db.close();
  }
}

/** Rows that appear more than once (same source and item). */
export function duplicates(rows: Array<{ source_key: string; item_id: string }>): string[] {
  const seen = new Set<string>();
  const dup: string[] = [];
  for (const row of rows) {
    const key = `${row.source_key}|${row.item_id}`;
    if (seen.has(key)) dup.push(key);
    seen.add(key);
  }
  return dup;
}
