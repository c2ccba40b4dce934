import type { Migration } from "../db/migrate";

/**
 * Sliding-window rate limits in the store of record (docs/completions.md#rate-limits): one row per admitted
 * request per window key, so a restart keeps the windows and replicas share them. The
 * `rate_limit_keys` row is what a check locks first (an upsert takes its row lock on
 * PostgreSQL; SQLite serializes write transactions), so count-then-insert is atomic.
 */
export const rateLimitMigrations: Migration[] = [
  {
    id: "0301_rate_limits",
    sql: `
      CREATE TABLE rate_limit_keys (
        key TEXT PRIMARY KEY,
        touched_ms INTEGER NOT NULL
      );

      CREATE TABLE rate_limit_hits (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        key TEXT NOT NULL,
        at_ms INTEGER NOT NULL
      );
      CREATE INDEX rate_limit_hits_by_key ON rate_limit_hits (key, at_ms);
    `,
  },
];
