import { all, first, run, sql, type Executor } from "../db/store";

export interface UsageRow {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  requestCount: number;
}

export interface UsageDelta {
  promptTokens: number;
  completionTokens: number;
  requests: number;
}

type CounterRow = {
  prompt_tokens: number | string;
  completion_tokens: number | string;
  total_tokens: number | string;
  request_count: number | string;
};

/** PostgreSQL returns BIGINT as a string (pg's default, exact past 2^53); counts here stay far below. */
const num = (value: number | string | null | undefined) => Number(value ?? 0);

/** Storage of usage counters and limit overrides; callers pass the executor. */
export function createUsageRepository() {
  return {
    /** Adds to the month's counters, and the day's, each in one atomic statement (no read-modify-write). */
    async add(
      tx: Executor,
      userId: string,
      month: string,
      delta: UsageDelta,
      now: string,
      day: string = now.slice(0, 10),
    ): Promise<void> {
      const total = delta.promptTokens + delta.completionTokens;
      await run(
        tx,
        sql`INSERT INTO usage_daily (user_id, day, total_tokens, request_count) VALUES (${userId}, ${day}, ${total}, ${delta.requests})
            ON CONFLICT (user_id, day) DO UPDATE SET
              total_tokens = usage_daily.total_tokens + excluded.total_tokens,
              request_count = usage_daily.request_count + excluded.request_count`,
      );
      await run(
        tx,
        sql`INSERT INTO usage_counters (user_id, month, prompt_tokens, completion_tokens, total_tokens, request_count, updated_at)
            VALUES (${userId}, ${month}, ${delta.promptTokens}, ${delta.completionTokens}, ${total}, ${delta.requests}, ${now})
            ON CONFLICT (user_id, month) DO UPDATE SET
              prompt_tokens = usage_counters.prompt_tokens + excluded.prompt_tokens,
              completion_tokens = usage_counters.completion_tokens + excluded.completion_tokens,
              total_tokens = usage_counters.total_tokens + excluded.total_tokens,
              request_count = usage_counters.request_count + excluded.request_count,
              updated_at = excluded.updated_at`,
      );
    },

    /**
     * Locks the month's counter row for the rest of the transaction (created at zero when
     * missing; an upsert takes the row lock on PostgreSQL, SQLite holds the write lock).
     */
    async lock(tx: Executor, userId: string, month: string, now: string): Promise<void> {
      await run(
        tx,
        sql`INSERT INTO usage_counters (user_id, month, prompt_tokens, completion_tokens, total_tokens, request_count, updated_at)
            VALUES (${userId}, ${month}, 0, 0, 0, 0, ${now})
            ON CONFLICT (user_id, month) DO UPDATE SET updated_at = usage_counters.updated_at`,
      );
    },

    /** Tokens used and tokens held by live holds, after dropping the user's expired holds. */
    async balance(tx: Executor, userId: string, month: string, nowMs: number): Promise<{ used: number; held: number }> {
      await run(tx, sql`DELETE FROM usage_holds WHERE user_id = ${userId} AND expires_ms <= ${nowMs}`);
      const row = await first<{ used: number | string | null; held: number | string | null }>(
        tx,
        sql`SELECT (SELECT total_tokens FROM usage_counters WHERE user_id = ${userId} AND month = ${month}) AS used,
                   (SELECT SUM(tokens) FROM usage_holds WHERE user_id = ${userId} AND month = ${month}) AS held`,
      );
      return { used: num(row?.used), held: num(row?.held) };
    },

    async hold(
      tx: Executor,
      hold: { id: string; userId: string; month: string; tokens: number; expiresMs: number },
    ): Promise<void> {
      await run(
        tx,
        sql`INSERT INTO usage_holds (id, user_id, month, tokens, expires_ms) VALUES (${hold.id}, ${hold.userId}, ${hold.month}, ${hold.tokens}, ${hold.expiresMs})`,
      );
    },

    async dropHold(tx: Executor, id: string): Promise<void> {
      await run(tx, sql`DELETE FROM usage_holds WHERE id = ${id}`);
    },

    async get(tx: Executor, userId: string, month: string): Promise<UsageRow> {
      const row = await first<CounterRow>(
        tx,
        sql`SELECT prompt_tokens, completion_tokens, total_tokens, request_count FROM usage_counters WHERE user_id = ${userId} AND month = ${month}`,
      );
      return {
        promptTokens: num(row?.prompt_tokens),
        completionTokens: num(row?.completion_tokens),
        totalTokens: num(row?.total_tokens),
        requestCount: num(row?.request_count),
      };
    },

    /** The user's override of the monthly token limit, or null. */
    /** The month's days that have usage, in order. */
    async days(
      tx: Executor,
      userId: string,
      month: string,
    ): Promise<Array<{ day: string; totalTokens: number; requestCount: number }>> {
      const rows = await all<{ day: string; total_tokens: number; request_count: number }>(
        tx,
        sql`SELECT day, total_tokens, request_count FROM usage_daily WHERE user_id = ${userId} AND day >= ${`${month}-01`} AND day <= ${`${month}-31`} ORDER BY day`,
      );
      return rows.map((r) => ({
        day: r.day,
        totalTokens: Number(r.total_tokens),
        requestCount: Number(r.request_count),
      }));
    },
    async limitOf(tx: Executor, userId: string): Promise<number | null> {
      const row = await first<{ monthly_tokens: number | string }>(
        tx,
        sql`SELECT monthly_tokens FROM usage_limits WHERE user_id = ${userId}`,
      );
      return row ? num(row.monthly_tokens) : null;
    },

    async setLimit(tx: Executor, userId: string, tokens: number, now: string): Promise<void> {
      await run(
        tx,
        sql`INSERT INTO usage_limits (user_id, monthly_tokens, updated_at) VALUES (${userId}, ${tokens}, ${now})
            ON CONFLICT (user_id) DO UPDATE SET monthly_tokens = excluded.monthly_tokens, updated_at = excluded.updated_at`,
      );
    },

    async clearLimit(tx: Executor, userId: string): Promise<boolean> {
      return (await run(tx, sql`DELETE FROM usage_limits WHERE user_id = ${userId}`)) > 0;
    },
  };
}
export type UsageRepository = ReturnType<typeof createUsageRepository>;
