import { all, run, sql, type Executor } from "../../db/store";

/**
 * The index tables with deleted rows still in their files (table `index_purges`): noted
 * in the transaction that takes the deletes off the outbox, removed once the table is
 * rewritten (index-purge.ts).
 */
export function createPurgeLog() {
  return {
    /** Notes tables with rows just deleted; a table already noted keeps its earlier time. */
    async note(tx: Executor, tables: Map<string, number>): Promise<void> {
      for (const [table, deletedAt] of tables) {
        await run(
          tx,
          sql`INSERT INTO index_purges (table_name, deleted_at) VALUES (${table}, ${deletedAt}) ON CONFLICT (table_name) DO NOTHING`,
        );
      }
    },

    /** Every noted table with the time of its earliest delete not purged yet. */
    async pending(db: Executor): Promise<Map<string, number>> {
      const rows = await all<{ table_name: string; deleted_at: number }>(
        db,
        sql`SELECT table_name, deleted_at FROM index_purges`,
      );
      return new Map(rows.map((row) => [row.table_name, Number(row.deleted_at)]));
    },

    /**
     * The table was rewritten: its deletes are gone from its files. (Its later deletes
     * are noted after the rewrite: the writer's jobs run one at a time.)
     */
    async done(db: Executor, table: string): Promise<void> {
      await run(db, sql`DELETE FROM index_purges WHERE table_name = ${table}`);
    },

    /** Forgets every table (the index was dropped for a rebuild). */
    async clear(tx: Executor): Promise<void> {
      await run(tx, sql`DELETE FROM index_purges`);
    },
  };
}

export type PurgeLog = ReturnType<typeof createPurgeLog>;
