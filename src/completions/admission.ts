import type { Principal } from "../auth/service";
import type { Config } from "../config";
import type { Store } from "../db/store";
import { AppError } from "../shared/app-error";
import { rateLimited, rateLimitHeaders, type RateLimiter, type WindowSpec } from "../rate-limits/service";
import { quotaRefusal, type QuotaHold, type UsageService } from "../usage/service";
import { countPromptTokens, promptTokenBound } from "../usage/tokens";
import type { ChatCompletionBody } from "./model";

/** The most memory context a completion may add, per injected item (a memory or a note) the request allows. */
export const INJECTED_TOKENS_PER_ITEM = 300;
/** Room for the block's headings and framing. */
const INJECTED_TOKENS_FIXED = 64;
/** Below this, no memory block fits (a heading and one short item): memory is skipped. */
export const MIN_INJECTION_TOKENS = 96;

const MINUTE = 60_000;
const HOUR = 3_600_000;

/** The rate limit windows a completion counts in: its credential's per minute, its user's per hour. */
export function rateWindows(
  principal: Principal,
  config: Pick<Config["completions"], "rateLimitPerKeyPerMinute" | "rateLimitPerPrincipalPerHour">,
): WindowSpec[] {
  const credential = principal.keyId ? `key:${principal.keyId}` : `credential:${principal.method}:${principal.userId}`;
  return [
    {
      key: credential,
      limit: config.rateLimitPerKeyPerMinute,
      windowMs: MINUTE,
      label: `${config.rateLimitPerKeyPerMinute} per minute per key`,
    },
    {
      key: `principal:${principal.userId}`,
      limit: config.rateLimitPerPrincipalPerHour,
      windowMs: HOUR,
      label: `${config.rateLimitPerPrincipalPerHour} per hour per principal`,
    },
  ];
}

/** What a request may cost, estimated before it is sent: what its quota hold is made of. */
export interface CostEstimate {
  /** The caller's messages: a bound without the tokenizer, or counted with it (usage/tokens.ts). */
  promptTokens: number;
  promptCounted: boolean;
  /** `max_completion_tokens` or `max_tokens` (else the configured default), times `n`. */
  completionTokens: number;
  /** The largest memory block this request could have injected. */
  injectionTokens: number;
}

const positiveInteger = (value: unknown) =>
  typeof value === "number" && Number.isInteger(value) && value > 0 ? value : null;

/**
 * The completion tokens per choice a request is held for, and so the bound it goes upstream
 * with: `max_completion_tokens`, else `max_tokens`, else `defaultCompletionTokens` (a value
 * that is not a positive integer, such as `-1` for "no limit", counts as none).
 */
export function completionBound(body: ChatCompletionBody, defaultCompletionTokens: number): number {
  const b = body as Record<string, unknown>;
  return positiveInteger(b.max_completion_tokens) ?? positiveInteger(b.max_tokens) ?? defaultCompletionTokens;
}

/**
 * The body's completion bound as the gateway gets it: every bound field the caller sent is
 * set to what was held (a gateway honouring the other one, or `-1`, would otherwise run past
 * the hold), and `max_tokens` when the caller sent none. `max_completion_tokens` alone is
 * not joined by `max_tokens`: some models refuse the older field.
 */
export function boundedUpstream(body: Record<string, unknown>, perChoice: number): Record<string, unknown> {
  const out = { ...body };
  const sentNew = out.max_completion_tokens !== undefined && out.max_completion_tokens !== null;
  const sentOld = out.max_tokens !== undefined && out.max_tokens !== null;
  if (sentNew) out.max_completion_tokens = perChoice;
  if (sentOld || !sentNew) out.max_tokens = perChoice;
  return out;
}

/**
 * The estimate of a request: the prompt as sent (its byte bound: counting needs the
 * tokenizer, see `createAdmission`), the completion's cap (or `defaultCompletionTokens`
 * when the request sets none) and the memory block's budget.
 */
export function estimateCost(
  body: ChatCompletionBody,
  o: { defaultCompletionTokens: number; memoryLimit: number; memoryEnabled: boolean; withNotes: boolean },
): CostEstimate {
  const b = body as Record<string, unknown>;
  const perChoice = completionBound(body, o.defaultCompletionTokens);
  const choices = positiveInteger(b.n) ?? 1;
  const items = o.memoryEnabled ? o.memoryLimit * (o.withNotes ? 2 : 1) : 0;
  return {
    promptTokens: promptTokenBound(body.messages),
    promptCounted: false,
    completionTokens: perChoice * choices,
    injectionTokens: items ? INJECTED_TOKENS_FIXED + items * INJECTED_TOKENS_PER_ITEM : 0,
  };
}

/** An admitted request: its rate-limit headers, its quota hold, and the memory block's budget (0: no memory). */
export interface Admitted {
  headers: Record<string, string>;
  hold: QuotaHold;
  injectionBudget: number;
}

export interface AdmissionRequest {
  userId: string;
  windows: WindowSpec[];
  at: Date;
  messages: unknown[];
  cost: CostEstimate;
  route: string;
}

type Attempt = { admitted: Admitted } | { refused: AppError; byQuota: boolean };

/**
 * Admission, in one transaction of the store of record, before any other work: the rate
 * limits (refused: not counted), then the monthly quota (the estimate must fit beside the
 * settled usage and what requests in progress hold; refused: not counted either), then the
 * hold and the rate-limit counts. Memory gets what fits of its budget; below the minimum
 * it is skipped rather than the request refused.
 *
 * The prompt is first bounded by its bytes, which spares loading the tokenizer (large:
 * docs/performance.md#why-the-code-is-tuned-as-it-is) while the quota has room; only a request that the bound does not fit is counted with
 * it and tried again.
 */
export function createAdmission({
  store,
  limiter,
  usage,
  holdTtlMs,
}: {
  store: Store;
  limiter: RateLimiter;
  usage: UsageService;
  holdTtlMs: number;
}) {
  function attempt(r: AdmissionRequest, cost: CostEstimate): Promise<Attempt> {
    return store.transaction(async (tx): Promise<Attempt> => {
      const rate = await limiter.evaluateIn(tx, r.windows, r.at.getTime());
      if (!rate.verdict.allowed) return { refused: rateLimited(rate.verdict, r.route), byQuota: false };
      const balance = await usage.balanceIn(tx, r.userId, r.at);
      const base = cost.promptTokens + cost.completionTokens;
      const free = balance.limit - balance.used - balance.held;
      if (base > free) {
        const detail = `${cost.promptTokens} prompt${cost.promptCounted ? "" : " at most"} + ${cost.completionTokens} completion`;
        const refusal = quotaRefusal(balance, { total: base, detail }, r.at);
        // Not counted: the window still has this request's slot.
        const headers = rateLimitHeaders({ ...rate.verdict, remaining: rate.verdict.remaining + 1 });
        return {
          refused: new AppError(refusal.status, refusal.errorCode, refusal.message, { ...headers, ...refusal.headers }),
          byQuota: true,
        };
      }
      const room = Math.min(cost.injectionTokens, free - base);
      const injectionBudget = room >= MIN_INJECTION_TOKENS ? room : 0;
      const hold = await usage.holdIn(tx, r.userId, r.at, base + injectionBudget, holdTtlMs);
      await rate.count();
      return { admitted: { headers: rateLimitHeaders(rate.verdict), hold, injectionBudget } };
    });
  }

  return async function admit(r: AdmissionRequest): Promise<Admitted> {
    let outcome = await attempt(r, r.cost);
    if ("refused" in outcome && outcome.byQuota && !r.cost.promptCounted) {
      const counted = await countPromptTokens(r.messages);
      if (counted < r.cost.promptTokens)
        outcome = await attempt(r, { ...r.cost, promptTokens: counted, promptCounted: true });
    }
    if ("refused" in outcome) throw outcome.refused;
    return outcome.admitted;
  };
}
export type Admit = ReturnType<typeof createAdmission>;
