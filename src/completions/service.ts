import type { Principal } from "../auth/service";
import type { Config } from "../config";
import { AppError } from "../errors/app-error";
import type { Logger } from "../lib/log";
import { rateLimited, rateLimitHeaders, type RateLimiter, type WindowSpec } from "../rate-limits/service";
import type { UsageService } from "../usage/service";
import { contentText, countPromptTokens, countTextTokens } from "../usage/tokens";
import type { WorkspaceService } from "../workspaces/service";
import { beforeDeadline, injectIntoSystem, memoryQuery, renderMemoryBlock, TIMED_OUT, type Retrieved, type Shimmer } from "./injection";
import { DEFAULT_MEMORY_LIMIT, type ChatCompletionBody } from "./model";
import type { Retriever } from "./retrieval";
import { passThrough, type StreamTally } from "./sse";
import { ClientGoneError, type Upstream } from "./upstream";

export interface CompletionRequest {
  principal: Principal;
  body: ChatCompletionBody;
  /** `X-Svc-Workspace`. */
  workspaceId: string | null;
  /** `X-Client-Key`. */
  clientKey: string | null;
  /** Aborts when the client disconnects. */
  signal: AbortSignal;
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
  limiter: RateLimiter;
  workspaces: WorkspaceService;
  log: Logger;
}

const ROUTE = "POST /v1/chat/completions";
const MINUTE = 60_000;
const HOUR = 3_600_000;

/** The same error with more headers (the route's `X-RateLimit-*` go on every answer). */
function withHeaders(error: unknown, headers: Record<string, string>): unknown {
  if (error instanceof ClientGoneError) return new AppError(499, "error", "the client closed the request", headers);
  return error instanceof AppError ? new AppError(error.status, error.errorCode, error.message, { ...headers, ...error.headers }) : error;
}

const ms = (value: number) => value.toFixed(2);

/** Tokens of a completion: the upstream's `usage` when it gave one, else counted (see usage/tokens.ts). */
async function tokensOf(usage: { prompt_tokens?: unknown; completion_tokens?: unknown } | null | undefined, messages: unknown[], completionText: string) {
  const prompt = typeof usage?.prompt_tokens === "number" ? usage.prompt_tokens : await countPromptTokens(messages);
  const completion = typeof usage?.completion_tokens === "number" ? usage.completion_tokens : await countTextTokens(completionText);
  return { promptTokens: Math.max(0, Math.round(prompt)), completionTokens: Math.max(0, Math.round(completion)) };
}

/** The text of a non-streaming completion's choices (content and tool-call arguments). */
function replyText(reply: any): string {
  const choices = Array.isArray(reply?.choices) ? reply.choices : [];
  return choices
    .map((c: any) => [contentText(c?.message?.content), ...(Array.isArray(c?.message?.tool_calls) ? c.message.tool_calls.map((t: any) => String(t?.function?.arguments ?? "")) : [])].join(""))
    .join("\n");
}

/**
 * `POST /v1/chat/completions`: rate limits, quota and workspace ownership are checked
 * while memories are retrieved (the window hides their commits); at the window's end the
 * request goes upstream, with the memories in the system prompt when they came in time.
 */
export function createCompletionService({ config, upstream, retriever, usage, limiter, workspaces, log }: CompletionServiceDeps) {
  function windowsOf(principal: Principal): WindowSpec[] {
    const credential = principal.keyId ? `key:${principal.keyId}` : `credential:${principal.method}:${principal.userId}`;
    return [
      { key: credential, limit: config.rateLimitPerKeyPerMinute, windowMs: MINUTE, label: `${config.rateLimitPerKeyPerMinute} per minute per key` },
      { key: `principal:${principal.userId}`, limit: config.rateLimitPerPrincipalPerHour, windowMs: HOUR, label: `${config.rateLimitPerPrincipalPerHour} per hour per principal` },
    ];
  }

  /** Admission: rate limits (counted), quota, workspace. Returns the `X-RateLimit-*` headers. */
  async function admit(r: CompletionRequest, startedAt: Date): Promise<Record<string, string>> {
    const userId = r.principal.userId;
    const [rate, quota, workspace] = await Promise.allSettled([
      limiter.check(windowsOf(r.principal)),
      usage.assertWithinQuota(userId, startedAt),
      r.workspaceId ? workspaces.requireOwned(userId, r.workspaceId) : Promise.resolve(null),
    ]);
    if (rate.status === "rejected") throw rate.reason;
    const headers = rateLimitHeaders(rate.value);
    if (!rate.value.allowed) throw rateLimited(rate.value, ROUTE);
    if (quota.status === "rejected") throw withHeaders(quota.reason, headers);
    if (workspace.status === "rejected") throw withHeaders(workspace.reason, headers);
    return headers;
  }

  async function meter(userId: string, startedAt: Date, messages: unknown[], usageReported: StreamTally["usage"], text: string) {
    try {
      const tokens = await tokensOf(usageReported, messages, text);
      await usage.record(userId, startedAt, { ...tokens, requests: 1 });
    } catch (error) {
      log.error("usage not recorded", { userId, error: error as Error });
    }
  }

  return {
    async complete(r: CompletionRequest): Promise<CompletionReply> {
      const t0 = performance.now();
      const startedAt = usage.now();
      const userId = r.principal.userId;
      const enabled = r.body.memory?.enabled ?? true;
      const query = enabled ? memoryQuery(r.body.messages) : "";
      const retrieval = query
        ? beforeDeadline(
            retriever.retrieve({ ownerId: userId, query, limit: r.body.memory?.limit ?? DEFAULT_MEMORY_LIMIT, workspaceId: r.workspaceId, clientKey: r.clientKey, deadline: t0 + config.memoryWindowMs }),
            t0 + config.memoryWindowMs,
          )
        : null;
      retrieval?.catch(() => {});

      const limitHeaders = await admit(r, startedAt);

      let shimmer: Shimmer = enabled ? "no-context" : "skipped";
      let found: Retrieved = { memories: [], notes: [] };
      if (retrieval) {
        const outcome = await retrieval.catch((error) => {
          log.warn("memory retrieval failed; going upstream without it", { reason: (error as Error).message });
          return null;
        });
        if (outcome === TIMED_OUT) shimmer = "timeout";
        else if (outcome && outcome.memories.length + outcome.notes.length > 0) {
          shimmer = "injected";
          found = outcome;
        }
      }

      const { memory: _ours, ...passed } = r.body;
      const messages = shimmer === "injected" ? injectIntoSystem(r.body.messages, renderMemoryBlock(found)) : r.body.messages;
      const upstreamBody: Record<string, unknown> = { ...passed, model: passed.model ?? config.defaultModel, messages };
      const stream = r.body.stream === true;
      const clientWantsUsage = (passed as { stream_options?: { include_usage?: unknown } }).stream_options?.include_usage === true;
      // Streams report usage only when asked; we ask, and drop that chunk if the client did not.
      if (stream) upstreamBody.stream_options = { ...((passed as { stream_options?: object }).stream_options ?? {}), include_usage: true };

      const headers: Record<string, string> = {
        ...limitHeaders,
        "x-svc-shimmer": shimmer,
        "x-svc-memory-count": String(found.memories.length),
        "x-svc-notes-count": String(found.notes.length),
      };
      const ours = performance.now() - t0;

      try {
        if (!stream) {
          const sent = performance.now();
          const reply = await upstream.json("POST", "/chat/completions", upstreamBody, r.signal);
          const back = performance.now();
          let parsed: any = null;
          try {
            parsed = JSON.parse(reply.text);
          } catch {}
          await meter(userId, startedAt, messages, parsed?.usage ?? null, replyText(parsed));
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
          let parsed: any = null;
          try {
            parsed = JSON.parse(text);
          } catch {}
          await meter(userId, startedAt, messages, parsed?.usage ?? null, replyText(parsed));
          return { status: call.response.status, headers: { ...headers, "content-type": type || "application/json", "x-svc-overhead-ms": ms(ours + performance.now() - headersIn) }, body: text };
        }
        const events = passThrough(body, {
          stripUsageChunk: !clientWantsUsage,
          abortUpstream: call.abort,
          clientSignal: r.signal,
          onEnd: (outcome, tally) => {
            if (outcome !== "done") log.debug("stream ended early", { outcome });
            return meter(userId, startedAt, messages, tally.usage, tally.text);
          },
        });
        headers["x-svc-overhead-ms"] = ms(ours + performance.now() - headersIn);
        return {
          status: 200,
          headers: { ...headers, "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "x-accel-buffering": "no" },
          body: events,
        };
      } catch (error) {
        throw withHeaders(error, headers);
      }
    },
  };
}
export type CompletionService = ReturnType<typeof createCompletionService>;
