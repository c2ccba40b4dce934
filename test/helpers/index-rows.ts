import * as lancedb from "@lancedb/lancedb";
import { join } from "node:path";

type Row = { source_key: string; item_id: string; owner_id: string; table: string };

/**
 * Reads the search index of a data dir directly (as a second process would), for tests
 * that compare what LanceDB holds with the store of record: every full-text row's
 * source key, item id, owner and table (vectors with `vectors: true`), so that
 * duplicates and misplaced rows show.
 */
export async function indexRows(dataDir: string, options: { vectors?: boolean } = {}): Promise<Row[]> {
  const db = await lancedb.connect(join(dataDir, "index"));
  try {
    const out: Row[] = [];
    for (const table of await db.tableNames()) {
      if (table.includes("__v_") !== Boolean(options.vectors)) continue;
      const handle = await db.openTable(table);
      const rows = (await handle.query().select(["source_key", "item_id", "owner_id"]).toArray()) as Row[];
      handle.close();
      out.push(...rows.map((r) => ({ source_key: r.source_key, item_id: r.item_id, owner_id: r.owner_id, table })));
    }
    return out;
  } finally {
    db.close();
  }
}

/** The index tables of a data dir. */
export async function indexTables(dataDir: string): Promise<string[]> {
  const db = await lancedb.connect(join(dataDir, "index"));
  try {
    return await db.tableNames();
  } finally {
    db.close();
  }
}

/** The columns of an index table that carry an index (full-text or vector). */
export async function indexedColumns(dataDir: string, table: string): Promise<string[]> {
  const db = await lancedb.connect(join(dataDir, "index"));
  try {
    const handle = await db.openTable(table);
    const columns = (await handle.listIndices()).flatMap((index) => index.columns);
    handle.close();
    return columns.sort();
  } finally {
    db.close();
  }
}

/** The fragments (data files) of an index table's newest version. */
export async function fragmentCount(dataDir: string, table: string): Promise<number> {
  const db = await lancedb.connect(join(dataDir, "index"));
  try {
    const handle = await db.openTable(table);
    const count = (await handle.stats()).fragmentStats.numFragments;
    handle.close();
    return count;
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

/** Whether the index writer has taken every change off the text stage, as a server's /health tells a caller with a token. */
export async function indexCaughtUp(url: string, token = "mock-token-health"): Promise<boolean> {
  const response = await fetch(`${url}/health`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await response.json()) as { index?: { pending: number | null } };
  return body.index?.pending === 0;
}

/** Waits (on the server's state, polled) until its index writer has caught up; fails after 30 s naming what it waited for. */
export async function waitForIndex(url: string, token?: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await indexCaughtUp(url, token))) {
    if (Date.now() > deadline) throw new Error(`the index of ${url} did not catch up within 30 s`);
    await Bun.sleep(20);
  }
}

/** The rows of an index table outside its text column's full-text index (all of them when it has none). */
export async function unindexedRows(dataDir: string, table: string): Promise<number> {
  const db = await lancedb.connect(join(dataDir, "index"));
  try {
    const handle = await db.openTable(table);
    const index = (await handle.listIndices()).find((candidate) => candidate.columns.includes("text"));
    const count = index ? ((await handle.indexStats(index.name))?.numUnindexedRows ?? 0) : await handle.countRows();
    handle.close();
    return count;
  } finally {
    db.close();
  }
}
