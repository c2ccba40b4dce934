import { AppError, type ErrorCode } from "../errors/app-error";
import type { Logger } from "../lib/log";

export interface UpstreamOptions {
  baseUrl: string;
  apiKey?: string;
  timeoutMs: number;
  log: Logger;
}

/** The client went away; nobody is left to answer. */
export class ClientGoneError extends Error {}

/** An open upstream request: its response (headers arrived, status 2xx) and its controls. */
export interface UpstreamCall {
  response: Response;
  /** Stops the timeout: a stream runs as long as the model writes. */
  settle(): void;
  /** Aborts the upstream request (client gone, stream cancelled). */
  abort(): void;
  /** True once the timeout fired. */
  timedOut(): boolean;
}

/** Our error code for an upstream 4xx kept as it is (status and message). */
const CODE_OF: Record<number, ErrorCode> = {
  400: "invalid_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 409: "conflict",
  413: "payload_too_large", 415: "unsupported_media_type", 429: "rate_limited",
};

/** The message of an upstream error body: OpenAI's `{error: {message}}`, `{error: "…"}`, `{message}` or the text. */
function messageOf(text: string): string {
  try {
    const body = JSON.parse(text);
    const m = body?.error?.message ?? (typeof body?.error === "string" ? body.error : undefined) ?? body?.message ?? body?.detail;
    if (typeof m === "string" && m) return m.slice(0, 1_000);
  } catch {}
  return text.trim().slice(0, 1_000) || "no message";
}

/**
 * The OpenAI-compatible upstream (LLM_GATEWAY_URL). Upstream 4xx keep their status and
 * message; 5xx and an unreachable upstream become 502 `upstream_error`; no answer
 * within LLM_GATEWAY_TIMEOUT_MS becomes 504 `upstream_timeout`.
 */
export function createUpstream({ baseUrl, apiKey, timeoutMs, log }: UpstreamOptions) {
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;

  /** Sends a request; resolves once headers arrive with a 2xx, throws an AppError otherwise. */
  async function open(method: "GET" | "POST", path: string, body: unknown, clientSignal: AbortSignal | undefined, timeout = timeoutMs): Promise<UpstreamCall> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeout);
    const onClientAbort = () => controller.abort();
    if (clientSignal?.aborted) controller.abort();
    else clientSignal?.addEventListener("abort", onClientAbort, { once: true });
    const settle = () => clearTimeout(timer);
    const fail = (error: unknown): never => {
      settle();
      clientSignal?.removeEventListener("abort", onClientAbort);
      if (error instanceof AppError) throw error;
      if (clientSignal?.aborted) throw new ClientGoneError("client disconnected");
      if (timedOut) throw new AppError(504, "upstream_timeout", `the upstream model server did not answer within ${timeout} ms`);
      log.warn("upstream unreachable", { path, reason: (error as Error).message });
      throw new AppError(502, "upstream_error", "the upstream model server could not be reached");
    };
    try {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: controller.signal,
      });
      if (!response.ok) {
        const message = messageOf(await response.text());
        if (response.status >= 400 && response.status < 500) {
          const extra: Record<string, string> = {};
          const retryAfter = response.headers.get("retry-after");
          if (retryAfter) extra["retry-after"] = retryAfter;
          throw new AppError(response.status, CODE_OF[response.status] ?? "invalid_request", `upstream: ${message}`, extra);
        }
        log.warn("upstream error", { path, status: response.status });
        throw new AppError(502, "upstream_error", `the upstream model server answered ${response.status}: ${message}`);
      }
      return {
        response,
        settle,
        timedOut: () => timedOut,
        abort: () => {
          settle();
          controller.abort();
        },
      };
    } catch (error) {
      return fail(error);
    }
  }

  return {
    open,

    /** A whole JSON reply (non-streaming); the timeout covers reading the body too. */
    async json(method: "GET" | "POST", path: string, body: unknown, clientSignal: AbortSignal | undefined, timeout = timeoutMs): Promise<{ text: string; status: number; contentType: string }> {
      const call = await open(method, path, body, clientSignal, timeout);
      try {
        const text = await call.response.text();
        return { text, status: call.response.status, contentType: call.response.headers.get("content-type") ?? "application/json" };
      } catch (error) {
        if (clientSignal?.aborted) throw new ClientGoneError("client disconnected");
        if (call.timedOut()) throw new AppError(504, "upstream_timeout", `the upstream model server did not answer within ${timeout} ms`);
        log.warn("upstream reply cut off", { path, reason: (error as Error).message });
        throw new AppError(502, "upstream_error", "the upstream model server closed the connection mid-reply");
      } finally {
        call.settle();
      }
    },
  };
}
export type Upstream = ReturnType<typeof createUpstream>;
