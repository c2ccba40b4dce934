import type { Settings } from "../../db/leases";
import type { Executor } from "../../db/store";

/**
 * Which full-text tables hold conversation context (text of neighbouring turns). Most
 * owners' memories carry no session, so their context columns are empty: a search of
 * such a table matches the text column alone, with the same scores (an empty column
 * adds nothing to BM25) at a third of the cost. The writer marks a table in the store
 * of record the first time it writes context into it, so every replica knows.
 */
export function createContextFlags(settings: Settings, db: Executor) {
  const known = new Set<string>();
  const key = (table: string) => `context:${table}`;
  return {
    async mark(table: string): Promise<void> {
      if (known.has(table)) return;
      await settings.set(db, key(table), "1");
      known.add(table);
    },
    /** True once context was ever written to the table (a stale true only costs speed). */
    async has(table: string): Promise<boolean> {
      if (known.has(table)) return true;
      if ((await settings.get(db, key(table))) === null) return false;
      known.add(table);
      return true;
    },
  };
}
export type ContextFlags = ReturnType<typeof createContextFlags>;
