import type { Store } from "../db/store";
import { AppError } from "../errors/app-error";
import type { UsageDelta, UsageRepository } from "./repository";

/** The UTC month of a time, `YYYY-MM`: the metering period. */
export const monthOf = (at: Date) => at.toISOString().slice(0, 7);

/** Whole seconds until the next UTC month starts (at least 1): when the quota renews. */
export function secondsUntilNextMonth(at: Date): number {
  const next = Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - at.getTime()) / 1000));
}

export interface UsageServiceDeps {
  store: Store;
  repo: UsageRepository;
  /** MONTHLY_TOKEN_LIMIT, for users without an override. */
  defaultMonthlyLimit: number;
  now?: () => Date;
}

/**
 * Metering per user per UTC month, and the monthly token quota. Counters live in the
 * store of record and are incremented atomically, so replicas share them exactly.
 */
export function createUsageService({ store, repo, defaultMonthlyLimit, now = () => new Date() }: UsageServiceDeps) {
  async function limitOf(userId: string): Promise<number> {
    return (await repo.limitOf(store.db, userId)) ?? defaultMonthlyLimit;
  }

  return {
    now,

    /** `GET /v1/usage`. */
    async usage(userId: string, at = now()) {
      const month = monthOf(at);
      const row = await repo.get(store.db, userId, month);
      return { month, usage: { totalTokens: row.totalTokens, requestCount: row.requestCount, uid: userId, month } };
    },

    /** `GET /v1/credits`: remaining never goes below zero (a stream may overshoot the limit). */
    async credits(userId: string, at = now()) {
      const month = monthOf(at);
      const [row, limit] = await Promise.all([repo.get(store.db, userId, month), limitOf(userId)]);
      return { used: row.totalTokens, limit, remaining: Math.max(0, limit - row.totalTokens), month };
    },

    /**
     * Refuses with 429 `rate_limited` when the month's tokens are used up, with
     * `Retry-After` until the month rolls over. Checked before any upstream call; a
     * request admitted just under the limit may overshoot it by its own tokens.
     */
    async assertWithinQuota(userId: string, at = now()): Promise<void> {
      const month = monthOf(at);
      const [row, limit] = await Promise.all([repo.get(store.db, userId, month), limitOf(userId)]);
      if (row.totalTokens >= limit) {
        throw new AppError(429, "rate_limited", `monthly token quota exhausted: ${row.totalTokens} of ${limit} tokens used in ${month}; it renews at the start of the next month (UTC)`, {
          "retry-after": String(secondsUntilNextMonth(at)),
        });
      }
    },

    /** Adds a completion's tokens to the month it started in. */
    async record(userId: string, at: Date, delta: UsageDelta): Promise<void> {
      await repo.add(store.db, userId, monthOf(at), delta, new Date().toISOString());
    },

    /** `mnemo usage show`: the month's counters and the limit in force. */
    async show(userId: string, at = now()) {
      const month = monthOf(at);
      const [row, override] = await Promise.all([repo.get(store.db, userId, month), repo.limitOf(store.db, userId)]);
      const limit = override ?? defaultMonthlyLimit;
      return { user: userId, month, ...row, limit, limitSource: override === null ? "default" : "override", remaining: Math.max(0, limit - row.totalTokens) };
    },

    setLimit: (userId: string, tokens: number) => repo.setLimit(store.db, userId, tokens, new Date().toISOString()),
    clearLimit: (userId: string) => repo.clearLimit(store.db, userId),
  };
}
export type UsageService = ReturnType<typeof createUsageService>;
