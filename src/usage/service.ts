import type { Executor, Store } from "../db/store";
import { AppError } from "../shared/app-error";
import type { UsageDelta, UsageRepository } from "./repository";

/** The UTC month of a time, `YYYY-MM`: the metering period. */
export const monthOf = (at: Date) => at.toISOString().slice(0, 7);

/** Whole seconds until the next UTC month starts (at least 1): when the quota renews. */
export function secondsUntilNextMonth(at: Date): number {
  const next = Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - at.getTime()) / 1000));
}

/** The month's quota as a hold is decided on it: settled tokens, tokens held by requests in progress, the limit. */
export interface QuotaBalance {
  month: string;
  used: number;
  held: number;
  limit: number;
}

/** Tokens held for one request from admission until it settles. */
export interface QuotaHold {
  id: string;
  userId: string;
  /** When the request started: its tokens count in this month. */
  at: Date;
  tokens: number;
}

/**
 * The 429 of a request whose estimate does not fit: `Retry-After` until the month rolls
 * over when even the settled usage leaves no room, else a few seconds (requests in
 * progress hold the rest and give back what they do not use).
 */
export function quotaRefusal(balance: QuotaBalance, need: { total: number; detail: string }, at: Date): AppError {
  const { month, used, held, limit } = balance;
  const renews = "it renews at the start of the next month (UTC)";
  if (used >= limit) {
    return new AppError(
      429,
      "rate_limited",
      `monthly token quota exhausted: ${used} of ${limit} tokens used in ${month}; ${renews}`,
      {
        "retry-after": String(secondsUntilNextMonth(at)),
      },
    );
  }
  const waitForHolds = used + need.total <= limit;
  const free = Math.max(0, limit - used - held);
  return new AppError(
    429,
    "rate_limited",
    `monthly token quota: this request may use up to ${need.total} tokens (${need.detail}) but ${free} of ${limit} remain in ${month}` +
      (held > 0 ? ` (${held} held by requests in progress)` : "") +
      `; set a lower max_tokens${waitForHolds ? ", or retry when requests in progress finish" : `, or wait: ${renews}`}`,
    { "retry-after": String(waitForHolds ? HOLD_RETRY_SECONDS : secondsUntilNextMonth(at)) },
  );
}

/** When a refusal is only for tokens held by requests in progress: they settle within seconds, usually. */
const HOLD_RETRY_SECONDS = 2;

export interface UsageServiceDeps {
  store: Store;
  repo: UsageRepository;
  /** MONTHLY_TOKEN_LIMIT, for users without an override. */
  defaultMonthlyLimit: number;
  now?: () => Date;
}

/**
 * Metering per user per UTC month, and the monthly token quota. Counters and holds live
 * in the store of record; a request holds its estimate from admission and settles to what
 * it used, so concurrent requests and replicas share one quota exactly.
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

    /** `GET /v1/usage/daily`: every day of the month so far (UTC), days without use at zero. */
    async daily(userId: string, at = now()) {
      const month = monthOf(at);
      const used = new Map((await repo.days(store.db, userId, month)).map((d) => [d.day, d]));
      const days = [];
      for (let d = 1; d <= at.getUTCDate(); d++) {
        const day = `${month}-${String(d).padStart(2, "0")}`;
        days.push(used.get(day) ?? { day, totalTokens: 0, requestCount: 0 });
      }
      return { month, days };
    },

    /** `GET /v1/credits`: settled tokens only; remaining never goes below zero (a request may use more than it held). */
    async credits(userId: string, at = now()) {
      const month = monthOf(at);
      const [row, limit] = await Promise.all([repo.get(store.db, userId, month), limitOf(userId)]);
      return { used: row.totalTokens, limit, remaining: Math.max(0, limit - row.totalTokens), month };
    },

    /**
     * In the caller's transaction: the month's balance, with the user's counter row locked
     * until it commits, so a hold decided on it cannot race another (see `holdIn`).
     */
    async balanceIn(tx: Executor, userId: string, at: Date): Promise<QuotaBalance> {
      const month = monthOf(at);
      await repo.lock(tx, userId, month, new Date().toISOString());
      const { used, held } = await repo.balance(tx, userId, month, at.getTime());
      return { month, used, held, limit: (await repo.limitOf(tx, userId)) ?? defaultMonthlyLimit };
    },

    /** In the transaction of `balanceIn`: holds `tokens` of the month's quota until settled, released or `ttlMs` passes. */
    async holdIn(tx: Executor, userId: string, at: Date, tokens: number, ttlMs: number): Promise<QuotaHold> {
      const id = crypto.randomUUID();
      await repo.hold(tx, { id, userId, month: monthOf(at), tokens, expiresMs: at.getTime() + ttlMs });
      return { id, userId, at, tokens };
    },

    /** A completion's tokens added to the month it started in, and its hold dropped, in one transaction. */
    async settle(hold: QuotaHold, delta: UsageDelta): Promise<void> {
      await store.transaction(async (tx) => {
        await repo.add(
          tx,
          hold.userId,
          monthOf(hold.at),
          delta,
          new Date().toISOString(),
          hold.at.toISOString().slice(0, 10),
        );
        await repo.dropHold(tx, hold.id);
      });
    },

    /** A hold given back unused (the upstream refused, the client left before it answered). */
    async release(hold: QuotaHold): Promise<void> {
      await repo.dropHold(store.db, hold.id);
    },

    /** `mnemo usage show`: the month's counters and the limit in force. */
    async show(userId: string, at = now()) {
      const month = monthOf(at);
      const [row, override] = await Promise.all([repo.get(store.db, userId, month), repo.limitOf(store.db, userId)]);
      const limit = override ?? defaultMonthlyLimit;
      return {
        user: userId,
        month,
        ...row,
        limit,
        limitSource: override === null ? "default" : "override",
        remaining: Math.max(0, limit - row.totalTokens),
      };
    },

    setLimit: (userId: string, tokens: number) => repo.setLimit(store.db, userId, tokens, new Date().toISOString()),
    clearLimit: (userId: string) => repo.clearLimit(store.db, userId),
  };
}
export type UsageService = ReturnType<typeof createUsageService>;
