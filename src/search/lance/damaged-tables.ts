import type * as lancedb from "@lancedb/lancedb";
import { inParallel } from "../../lib/in-parallel";

/** Tables opened at once: opening waits on I/O, not CPU. */
const CHECKS_AT_ONCE = 8;

/**
 * Tables that exist but cannot be read (damaged files), each with its error, in name
 * order: a writer taking over checks them once, so a damaged index is rebuilt instead of
 * failing every search. One open and one row count per table, eight at a time, which
 * shortens a restart with many tables (docs/performance.md#why-the-code-is-tuned-as-it-is). `atOnce` is for the bench that measures this.
 */
export async function unreadableTables(
  connection: lancedb.Connection,
  atOnce = CHECKS_AT_ONCE,
): Promise<Array<{ name: string; reason: string }>> {
  const damaged: Array<{ name: string; reason: string }> = [];
  await inParallel(await connection.tableNames(), atOnce, async (name) => {
    try {
      const table = await connection.openTable(name);
      try {
        await table.countRows();
      } finally {
        table.close();
      }
    } catch (error) {
      damaged.push({ name, reason: (error as Error).message.split("\n")[0].slice(0, 200) });
    }
  });
  return damaged.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
