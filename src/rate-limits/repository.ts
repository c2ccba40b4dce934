import { first, run, sql, type Executor } from "../db/store";

export interface WindowState {
  /** Admitted requests still inside the window. */
  count: number;
  /** When the oldest and newest of them were admitted (ms since the epoch), null when none. */
  oldestMs: number | null;
  newestMs: number | null;
}

const num = (value: number | string | null | undefined) =>
  value === null || value === undefined ? null : Number(value);

/** Storage of the sliding windows; every method runs inside the caller's transaction. */
export function createRateLimitRepository() {
  return {
    /** Locks the key's row for the rest of the transaction (PostgreSQL row lock; SQLite holds the write lock already). */
    async lock(tx: Executor, key: string, nowMs: number): Promise<void> {
      await run(
        tx,
        sql`INSERT INTO rate_limit_keys (key, touched_ms) VALUES (${key}, ${nowMs}) ON CONFLICT (key) DO UPDATE SET touched_ms = excluded.touched_ms`,
      );
    },

    /** Drops hits that left the window, then reads what is left. */
    async window(tx: Executor, key: string, sinceMs: number): Promise<WindowState> {
      await run(tx, sql`DELETE FROM rate_limit_hits WHERE key = ${key} AND at_ms <= ${sinceMs}`);
      const row = await first<{ n: number | string; oldest: number | string | null; newest: number | string | null }>(
        tx,
        sql`SELECT COUNT(*) AS n, MIN(at_ms) AS oldest, MAX(at_ms) AS newest FROM rate_limit_hits WHERE key = ${key}`,
      );
      return { count: Number(row?.n ?? 0), oldestMs: num(row?.oldest), newestMs: num(row?.newest) };
    },

    async hit(tx: Executor, key: string, atMs: number): Promise<void> {
      await run(tx, sql`INSERT INTO rate_limit_hits (key, at_ms) VALUES (${key}, ${atMs})`);
    },
  };
}
export type RateLimitRepository = ReturnType<typeof createRateLimitRepository>;
