import type { Migration } from "../db/migrate";

/**
 * Usage metering (docs/completions.md#usage-and-quota): one counter row per user per UTC month, incremented by a
 * single `INSERT … ON CONFLICT DO UPDATE` so concurrent completions (and replicas)
 * never lose an increment; and per-user overrides of the monthly token limit.
 */
export const usageMigrations: Migration[] = [
  {
    id: "0300_usage",
    sql: `
      CREATE TABLE usage_counters (
        user_id TEXT NOT NULL,
        month TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        total_tokens INTEGER NOT NULL DEFAULT 0,
        request_count INTEGER NOT NULL DEFAULT 0,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (user_id, month)
      );

      CREATE TABLE usage_limits (
        user_id TEXT PRIMARY KEY,
        monthly_tokens INTEGER NOT NULL,
        updated_at TEXT NOT NULL
      );
    `,
  },
  {
    // Quota holds: a completion holds its estimated tokens from admission until
    // it settles, so concurrent requests cannot all pass a check made before any recorded.
    // A hold that outlives its expiry (its server died) stops counting.
    id: "0302_usage_holds",
    sql: `
      CREATE TABLE usage_holds (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        month TEXT NOT NULL,
        tokens INTEGER NOT NULL,
        expires_ms INTEGER NOT NULL
      );
      CREATE INDEX usage_holds_by_user ON usage_holds (user_id, month);
    `,
  },
  {
    // Tokens per UTC day, for the web app's chart: added in the same transaction as the month's counters.
    id: "0303_usage_daily",
    sql: `
      CREATE TABLE usage_daily (
        user_id TEXT NOT NULL,
        day TEXT NOT NULL,
        total_tokens INTEGER NOT NULL DEFAULT 0,
        request_count INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (user_id, day)
      );
    `,
  },
];
