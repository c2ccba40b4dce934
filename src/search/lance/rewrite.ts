import type * as lancedb from "@lancedb/lancedb";
import { fullTextIndex, TEXT_COLUMNS } from "./lance-schema";

/** What a rewrite left behind: rows kept, and whether an ANN index was dropped (the caller builds it again). */
export interface Rewritten {
  rows: number;
  vectorIndexDropped: boolean;
}

/**
 * Rewrites a table so that nothing of its deleted rows stays in its files. A LanceDB
 * delete only marks rows in a deletion file: their bytes stay in the data file, and
 * their terms in the full-text index, until the fragment is rewritten. Compaction
 * rewrites a fragment only past 10 % of its rows deleted (and LanceDB 0.39's Node SDK
 * takes no threshold), so one deleted memory among hundreds stayed on disk indefinitely.
 * Here the live rows are written again as the table's new version (one commit: a reader
 * sees the old rows or the new ones, never a mix), the full-text indices are built anew
 * from them, and every older version is removed with its files.
 *
 * Between the commit and the rebuilt indices a search scans the rows flat (slower, same
 * answers; a `fastSearch` would find nothing, so the caller turns it off meanwhile); an
 * ANN index is not rebuilt here (seconds on a large table), the caller hands the table to
 * the ANN builds, and vector searches are exact meanwhile. Fragment ids go on counting up
 * across the overwrite (LanceDB 0.39), so an address map of old fragments (row-keys.ts)
 * never matches a new row. The live rows are held in memory once (each its text plus
 * 0.5–2 KB of vectors).
 *
 * `sole()`: whether this process still is the only writer of the index. Only then are
 * files no version names (left by a write that failed) removed too: another writer's
 * commit under way would have such files.
 */
export async function rewriteWithoutDeleted(table: lancedb.Table, sole: () => boolean): Promise<Rewritten> {
  const indices = await table.listIndices();
  const live = await table.query().toArrow();
  const counted = await table.countRows();
  // A query that stopped short would lose rows: the index is derived, but losing rows
  // silently would leave searches without them until a rebuild.
  if (live.numRows !== counted) throw new Error(`rewrite of ${table.name} read ${live.numRows} of ${counted} rows`);
  if (live.numRows === 0) return { rows: 0, vectorIndexDropped: false };
  await table.add(live, { mode: "overwrite" });
  let vectorIndexDropped = false;
  for (const index of indices) {
    const column = index.columns[0];
    if (TEXT_COLUMNS.includes(column)) await table.createIndex(column, { config: fullTextIndex(), replace: true });
    else vectorIndexDropped = true;
  }
  // Versions older than now go with every file only they used: the old data files,
  // deletion files and index files. Only the index writer writes this table, and it is
  // not writing it now (its jobs run one at a time), so no file of an unfinished commit
  // can be taken for an orphan.
  await table.optimize({ cleanupOlderThan: new Date(), deleteUnverified: sole() });
  return { rows: live.numRows, vectorIndexDropped };
}
