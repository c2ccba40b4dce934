import type { Executor, Store } from "../db/store";
import { AppError } from "../shared/app-error";
import type { RateLimitRepository, WindowState } from "./repository";

/** One limit: at most `limit` requests per sliding `windowMs` for `key`. */
export interface WindowSpec {
  key: string;
  limit: number;
  windowMs: number;
  /** How the limit reads in a refusal, e.g. "60 per minute per key". */
  label: string;
}

/** The state a response reports (`X-RateLimit-*`): the window closest to refusing. */
export interface RateLimitVerdict {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the binding window is back at its full limit. */
  resetSeconds: number;
  /** When refused: whole seconds until the refusing window admits one more request. */
  retryAfterSeconds: number;
  /** Labels of the windows that refused. */
  refusedBy: string[];
}

const ceilSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** `X-RateLimit-*` headers of a verdict. */
export function rateLimitHeaders(verdict: RateLimitVerdict): Record<string, string> {
  return {
    "x-ratelimit-limit": String(verdict.limit),
    "x-ratelimit-remaining": String(verdict.remaining),
    "x-ratelimit-reset": String(verdict.resetSeconds),
  };
}

/**
 * Sliding-window-log rate limits in the store of record: exact at the boundary (the
 * 61st request within any 60 seconds is refused), shared by replicas, kept over
 * restarts. A refused request is not counted, so a client that backs off for
 * `Retry-After` gets in.
 */
export function createRateLimiter({
  store,
  repo,
  now = () => Date.now(),
}: {
  store: Store;
  repo: RateLimitRepository;
  now?: () => number;
}) {
  /**
   * In the caller's transaction: the verdict of every window at `at`, with their keys
   * locked until it commits, and `count` to record the request as admitted.
   */
  async function evaluateIn(
    tx: Executor,
    windows: WindowSpec[],
    at: number,
  ): Promise<{ verdict: RateLimitVerdict; count(): Promise<void> }> {
    // Keys locked in one order, so two requests never wait on each other crosswise.
    const sorted = [...windows].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const states: Array<{ w: WindowSpec; state: WindowState }> = [];
    for (const w of sorted) {
      await repo.lock(tx, w.key, at);
      states.push({ w, state: await repo.window(tx, w.key, at - w.windowMs) });
    }
    const count = async () => {
      for (const { w } of states) await repo.hit(tx, w.key, at);
    };
    const refusing = states.filter(({ w, state }) => state.count >= w.limit);
    if (refusing.length) {
      // Retry when every refusing window has freed a slot: its oldest hit leaves.
      const retryMs = Math.max(...refusing.map(({ w, state }) => (state.oldestMs ?? at) + w.windowMs - at));
      const binding = refusing[0];
      const verdict = {
        allowed: false,
        limit: binding.w.limit,
        remaining: 0,
        resetSeconds: ceilSeconds((binding.state.newestMs ?? at) + binding.w.windowMs - at),
        retryAfterSeconds: ceilSeconds(retryMs),
        refusedBy: refusing.map(({ w }) => w.label),
      };
      return { verdict, count: async () => {} };
    }
    // The window with the fewest requests left is the one a client should pace by.
    const binding = states.reduce((a, b) => (b.w.limit - b.state.count - 1 < a.w.limit - a.state.count - 1 ? b : a));
    const verdict = {
      allowed: true,
      limit: binding.w.limit,
      remaining: binding.w.limit - binding.state.count - 1,
      resetSeconds: ceilSeconds(binding.w.windowMs),
      retryAfterSeconds: 0,
      refusedBy: [],
    };
    return { verdict, count };
  }

  return {
    now,
    evaluateIn,

    /** Admits (and counts) a request under every window, or refuses it under none. */
    async check(windows: WindowSpec[]): Promise<RateLimitVerdict> {
      return store.transaction(async (tx) => {
        const { verdict, count } = await evaluateIn(tx, windows, now());
        if (verdict.allowed) await count();
        return verdict;
      });
    },
  };
}
export type RateLimiter = ReturnType<typeof createRateLimiter>;

/** The 429 of a refused verdict, carrying `Retry-After` and the `X-RateLimit-*` headers. */
export function rateLimited(verdict: RateLimitVerdict, route: string): AppError {
  return new AppError(
    429,
    "rate_limited",
    `rate limit exceeded on ${route}: ${verdict.refusedBy.join(" and ")}; retry in ${verdict.retryAfterSeconds} s`,
    {
      ...rateLimitHeaders(verdict),
      "retry-after": String(verdict.retryAfterSeconds),
    },
  );
}
