import { AppError } from "../shared/app-error";
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

/**
 * Upstream text redacted for the server log: credentials in URLs (`user:pass@`, secret
 * query parameters), key-like tokens (`sk-…`, long opaque strings), the gateway key
 * itself; cut to 500 characters. The logger then redacts bearer tokens and hex keys too.
 */
export function redactUpstreamText(text: string, gatewayApiKey?: string): string {
  let out = text.trim().slice(0, 2_000);
  if (gatewayApiKey) out = out.split(gatewayApiKey).join("[redacted]");
  out = out
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"']*@/gi, "$1[redacted]@")
    .replace(/([?&](?:[a-z_-]*(?:key|token|secret|password|signature|sig|auth)[a-z_-]*)=)[^&\s"']+/gi, "$1[redacted]")
    .replace(/\b(?:sk|pk|rk|ak|key|token|secret)[-_][A-Za-z0-9_-]{6,}/gi, "[redacted]")
    .replace(/\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{32,}\b/g, "[redacted]");
  return out.length > 500 ? `${out.slice(0, 499)}…` : out;
}

/**
 * Our answer to an upstream error status. Nothing of the upstream's body reaches the
 * caller (it may name the gateway's key or internal addresses): a generic message with
 * the upstream status. A refusal of the request as such (400, 404 for an unknown model,
 * 413) stays a 4xx; 429 stays 429 with `Retry-After`; the gateway refusing Mnemo's own
 * credentials (401, 403, 407) is Mnemo's problem, not the caller's: 502; 408 is 504.
 */
export function upstreamFailure(status: number, retryAfter: string | null): AppError {
  if (status === 429) {
    const seconds = retryAfterSeconds(retryAfter);
    return new AppError(
      429,
      "rate_limited",
      `the model gateway refused the request (status 429); retry in ${seconds} s`,
      { "retry-after": String(seconds) },
    );
  }
  if (status === 408) return new AppError(504, "upstream_timeout", "the model gateway timed out (status 408)");
  if (status >= 500 || status < 400)
    return new AppError(502, "upstream_error", `the model gateway failed (status ${status})`);
  const refused = `the model gateway refused the request (status ${status})`;
  if (status === 401 || status === 403 || status === 407) return new AppError(502, "upstream_error", refused);
  if (status === 404) return new AppError(404, "not_found", refused);
  if (status === 413) return new AppError(413, "payload_too_large", refused);
  return new AppError(400, "invalid_request", refused);
}

/** An upstream `Retry-After` (seconds or an HTTP date) as whole seconds, at least 1. */
function retryAfterSeconds(value: string | null): number {
  if (value && /^\d+$/.test(value.trim())) return Math.max(1, Number(value.trim()));
  const date = value ? Date.parse(value) : NaN;
  return Number.isFinite(date) ? Math.max(1, Math.ceil((date - Date.now()) / 1000)) : 1;
}

/**
 * The OpenAI-compatible upstream (LLM_GATEWAY_URL). Its error statuses are answered as
 * `upstreamFailure` says, its error text goes to the log only (redacted); an unreachable
 * upstream is 502 `upstream_error`; no answer within LLM_GATEWAY_TIMEOUT_MS is 504
 * `upstream_timeout`.
 */
export function createUpstream({ baseUrl, apiKey, timeoutMs, log }: UpstreamOptions) {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;

  /** Sends a request; resolves once headers arrive with a 2xx, throws an AppError otherwise. */
  async function open(
    method: "GET" | "POST",
    path: string,
    body: unknown,
    clientSignal: AbortSignal | undefined,
    timeout = timeoutMs,
  ): Promise<UpstreamCall> {
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
      if (timedOut)
        throw new AppError(504, "upstream_timeout", `the upstream model server did not answer within ${timeout} ms`);
      log.warn("upstream unreachable", { path, reason: redactUpstreamText((error as Error).message, apiKey) });
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
        const text = await response.text().catch(() => "");
        log.warn("the model gateway answered an error", {
          path,
          status: response.status,
          upstream: redactUpstreamText(text, apiKey),
        });
        throw upstreamFailure(response.status, response.headers.get("retry-after"));
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
    async json(
      method: "GET" | "POST",
      path: string,
      body: unknown,
      clientSignal: AbortSignal | undefined,
      timeout = timeoutMs,
    ): Promise<{ text: string; status: number; contentType: string }> {
      const call = await open(method, path, body, clientSignal, timeout);
      try {
        const text = await call.response.text();
        return {
          text,
          status: call.response.status,
          contentType: call.response.headers.get("content-type") ?? "application/json",
        };
      } catch (error) {
        if (clientSignal?.aborted) throw new ClientGoneError("client disconnected");
        if (call.timedOut())
          throw new AppError(504, "upstream_timeout", `the upstream model server did not answer within ${timeout} ms`);
        log.warn("upstream reply cut off", { path, reason: redactUpstreamText((error as Error).message, apiKey) });
        throw new AppError(502, "upstream_error", "the upstream model server closed the connection mid-reply");
      } finally {
        call.settle();
      }
    },
  };
}
export type Upstream = ReturnType<typeof createUpstream>;
