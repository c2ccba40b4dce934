import type { Principal } from "../auth/service";
import type { Config } from "../config";
import { AppError } from "../shared/app-error";
import type { Logger } from "../lib/log";
import type { UsageService } from "../usage/service";
import { contentText } from "../usage/tokens";
import { newId } from "../lib/ids";
import type { WorkspaceService } from "../workspaces/service";
import { boundedUpstream, completionBound, estimateCost, rateWindows, type Admit } from "./admission";
import {
  beforeDeadline,
  injectIntoSystem,
  memoryQuery,
  renderMemoryBlock,
  TIMED_OUT,
  withinBudget,
  type Retrieved,
  type Shimmer,
} from "./injection";
import { DEFAULT_MEMORY_LIMIT, type ChatCompletionBody } from "./model";
import { holdSettlement } from "./quota-hold";
import { checkCompletion, replyText, usageOf } from "./reply";
import type { Retriever } from "./retrieval";
import { passThrough } from "./sse";
import { ClientGoneError, redactUpstreamText, type Upstream } from "./upstream";

export interface CompletionRequest {
  principal: Principal;
  body: ChatCompletionBody;
  /** `X-Svc-Workspace`. */
  workspaceId: string | null;
  /** `X-Client-Key`. */
  clientKey: string | null;
  /** Aborts when the client disconnects. */
  signal: AbortSignal;
  /**
   * `X-Svc-Remember: true`: capture the exchange (in the thread `X-Svc-Thread`, else a new
   * one); `false`: do not; null (no header): the user's default.
   */
  remember?: { threadId: string | null } | false | null;
}

/** One exchange of a completion, to be remembered once the reply is delivered. */
export interface CapturedExchange {
  userId: string;
  /** `X-Svc-Workspace`: the thread's workspace and that of the memories formed. */
  workspaceId: string | null;
  threadId: string;
  /** The request's new user messages: those after its last assistant message. */
  messages: string[];
  reply: string;
}

/** Memory capture (formation/capture.ts), off unless a request asks for it. */
export interface Capture {
  /** False in reverse-proxy encryption mode unless the operator allowed extraction. */
  readonly enabled: boolean;
  /** Whether the user captures completions that send no X-Svc-Remember (off unless they said so). */
  rememberByDefault(userId: string): Promise<boolean>;
  /** Records the exchange in the background; returns at once. */
  record(exchange: CapturedExchange): void;
}

/** The user messages after the last assistant message, as text. */
function newUserMessages(messages: unknown[]): string[] {
  const out: string[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { role?: unknown; content?: unknown };
    if (m?.role === "assistant") break;
    if (m?.role === "user") out.unshift(contentText(m.content));
  }
  return out.filter((text) => text.trim());
}

/** What the route answers: the upstream's body (text or stream) with our headers. */
export interface CompletionReply {
  status: number;
  headers: Record<string, string>;
  body: string | ReadableStream<Uint8Array>;
}

export interface CompletionServiceDeps {
  config: Config["completions"];
  upstream: Upstream;
  retriever: Retriever;
  usage: UsageService;
  admit: Admit;
  workspaces: WorkspaceService;
  log: Logger;
  /** Capture of exchanges (`X-Svc-Remember`); none: the header is answered `off`. */
  capture?: Capture;
}

const ROUTE = "POST /v1/chat/completions";

/** The same error with more headers (the route's `X-RateLimit-*` go on every answer). */
function withHeaders(error: unknown, headers: Record<string, string>): unknown {
  if (error instanceof ClientGoneError) return new AppError(499, "error", "the client closed the request", headers);
  return error instanceof AppError
    ? new AppError(error.status, error.errorCode, error.message, { ...headers, ...error.headers })
    : error;
}

const ms = (value: number) => value.toFixed(2);

/**
 * `POST /v1/chat/completions`: admission first (rate limits, then a hold on the monthly
 * quota for the request's estimate; workspace ownership beside it), and only then the
 * memory retrieval, within its window (MNEMO_MEMORY_WINDOW_MS). At the window's end the
 * request goes upstream, with the memories that came in time and fit the hold in the
 * system prompt; the hold settles to what the request used, or is released when nothing
 * came back (the upstream refused it, the client left).
 */
export function createCompletionService({
  config,
  upstream,
  retriever,
  usage,
  admit,
  workspaces,
  log,
  capture,
}: CompletionServiceDeps) {
  /** The memories for the request within the window and the block's token budget; the shimmer says what came of it. */
  async function retrieve(
    r: CompletionRequest,
    query: string,
    budget: number,
    deadline: number,
  ): Promise<{ shimmer: Shimmer; found: Retrieved }> {
    const none = { memories: [], notes: [] };
    const limit = r.body.memory?.limit ?? DEFAULT_MEMORY_LIMIT;
    const search = retriever.retrieve({
      ownerId: r.principal.userId,
      query,
      limit,
      workspaceId: r.workspaceId,
      clientKey: r.clientKey,
      deadline,
    });
    const outcome = await beforeDeadline(search, deadline).catch((error) => {
      log.warn("memory retrieval failed; going upstream without it", { reason: (error as Error).message });
      return null;
    });
    if (outcome === TIMED_OUT) return { shimmer: "timeout", found: none };
    if (!outcome || outcome.memories.length + outcome.notes.length === 0) return { shimmer: "no-context", found: none };
    const found = await withinBudget(outcome, budget);
    // Found, but none fits what the quota has room for: skipped, as when no room was left at all.
    return { shimmer: found.memories.length + found.notes.length ? "injected" : "skipped", found };
  }

  return {
    async complete(r: CompletionRequest): Promise<CompletionReply> {
      const t0 = performance.now();
      const startedAt = usage.now();
      const userId = r.principal.userId;
      const enabled = r.body.memory?.enabled ?? true;
      const query = enabled ? memoryQuery(r.body.messages) : "";
      const cost = estimateCost(r.body, {
        defaultCompletionTokens: config.completionReserveTokens,
        memoryLimit: r.body.memory?.limit ?? DEFAULT_MEMORY_LIMIT,
        memoryEnabled: query !== "",
        withNotes: r.workspaceId !== null,
      });
      const [admission, workspace, byDefault] = await Promise.allSettled([
        admit({
          userId,
          windows: rateWindows(r.principal, config),
          at: startedAt,
          messages: r.body.messages,
          cost,
          route: ROUTE,
        }),
        r.workspaceId ? workspaces.requireOwned(userId, r.workspaceId) : Promise.resolve(null),
        // Read beside admission, only when the request says nothing.
        r.remember == null && capture?.enabled ? capture.rememberByDefault(userId) : Promise.resolve(false),
      ]);
      if (admission.status === "rejected") throw admission.reason;
      const { headers: limitHeaders, hold, injectionBudget } = admission.value;
      const quota = holdSettlement(hold, usage, log);
      const headers: Record<string, string> = { ...limitHeaders };
      try {
        if (workspace.status === "rejected") throw workspace.reason;

        // Memory: none asked (or no room left for it in the quota) is `skipped`.
        let shimmer: Shimmer = query ? "skipped" : enabled ? "no-context" : "skipped";
        let found: Retrieved = { memories: [], notes: [] };
        // The window is retrieval's: it starts once the request is admitted.
        if (query && injectionBudget > 0)
          ({ shimmer, found } = await retrieve(r, query, injectionBudget, performance.now() + config.memoryWindowMs));
        else if (query) log.debug("memory skipped: no room in the monthly quota for its context", { userId });

        const { memory: _ours, ...passed } = r.body;
        const messages =
          shimmer === "injected" ? injectIntoSystem(r.body.messages, renderMemoryBlock(found)) : r.body.messages;
        // The gateway may produce no more than the hold covers: the bound it gets is the one held.
        const upstreamBody = boundedUpstream(
          { ...passed, model: passed.model ?? config.defaultModel, messages },
          completionBound(r.body, config.completionReserveTokens),
        );
        const stream = r.body.stream === true;
        const clientWantsUsage =
          (passed as { stream_options?: { include_usage?: unknown } }).stream_options?.include_usage === true;
        // Streams report usage only when asked; we ask, and drop that chunk if the client did not.
        if (stream)
          upstreamBody.stream_options = {
            ...((passed as { stream_options?: object }).stream_options ?? {}),
            include_usage: true,
          };

        // Capture, asked for: the thread is named now; the exchange is written once the reply is out.
        let remember: ((reply: string) => void) | null = null;
        const asked = r.remember
          ? r.remember
          : r.remember == null && byDefault.status === "fulfilled" && byDefault.value
            ? { threadId: null }
            : null;
        if (asked) {
          if (capture?.enabled) {
            const threadId = asked.threadId ?? newId("thr");
            headers["x-svc-thread"] = threadId;
            headers["x-svc-remember"] = "queued";
            const exchange = {
              userId,
              workspaceId: r.workspaceId,
              threadId,
              messages: newUserMessages(r.body.messages),
            };
            remember = (reply) => {
              if (exchange.messages.length || reply.trim()) capture.record({ ...exchange, reply });
            };
          } else headers["x-svc-remember"] = "off";
        }
        headers["x-svc-shimmer"] = shimmer;
        headers["x-svc-memory-count"] = String(found.memories.length);
        headers["x-svc-notes-count"] = String(found.notes.length);
        const ours = performance.now() - t0;

        if (!stream) {
          const sent = performance.now();
          const reply = await upstream.json("POST", "/chat/completions", upstreamBody, r.signal);
          const back = performance.now();
          let parsed: unknown = null;
          try {
            parsed = JSON.parse(reply.text);
          } catch {}
          checkCompletion(parsed, reply.text, log, config.gatewayApiKey);
          await quota.settle(messages, usageOf(parsed), replyText(parsed));
          if (remember && reply.status < 300) remember(replyText(parsed));
          headers["x-svc-overhead-ms"] = ms(ours + (performance.now() - back));
          log.debug("completion", { shimmer, upstreamMs: ms(back - sent) });
          return { status: reply.status, headers: { ...headers, "content-type": reply.contentType }, body: reply.text };
        }

        const call = await upstream.open("POST", "/chat/completions", upstreamBody, r.signal);
        const headersIn = performance.now();
        call.settle();
        const type = call.response.headers.get("content-type") ?? "";
        const body = call.response.body;
        if (!type.includes("text/event-stream") || !body) {
          // An upstream that ignored `stream: true` answered one JSON object: passed on as it is.
          const text = await call.response.text();
          let parsed: unknown = null;
          try {
            parsed = JSON.parse(text);
          } catch {}
          checkCompletion(parsed, text, log, config.gatewayApiKey);
          await quota.settle(messages, usageOf(parsed), replyText(parsed));
          return {
            status: call.response.status,
            headers: {
              ...headers,
              "content-type": type || "application/json",
              "x-svc-overhead-ms": ms(ours + performance.now() - headersIn),
            },
            body: text,
          };
        }
        const events = passThrough(body, {
          stripUsageChunk: !clientWantsUsage,
          abortUpstream: call.abort,
          clientSignal: r.signal,
          onUpstreamError: (text) =>
            log.warn("the model gateway reported an error mid-stream", {
              upstream: redactUpstreamText(text, config.gatewayApiKey),
            }),
          onEnd: (outcome, tally) => {
            if (outcome !== "done") log.debug("stream ended early", { outcome });
            else remember?.(tally.text);
            return quota.settle(messages, tally.usage, tally.text);
          },
        });
        headers["x-svc-overhead-ms"] = ms(ours + performance.now() - headersIn);
        return {
          status: 200,
          headers: {
            ...headers,
            "content-type": "text/event-stream; charset=utf-8",
            "cache-control": "no-cache",
            "x-accel-buffering": "no",
          },
          body: events,
        };
      } catch (error) {
        // Nothing came back to meter: the hold is given back.
        await quota.release();
        throw withHeaders(error, headers);
      }
    },
  };
}
export type CompletionService = ReturnType<typeof createCompletionService>;
