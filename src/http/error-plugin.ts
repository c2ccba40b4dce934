import { Elysia, type ValidationError } from "elysia";
import { redactSecrets, type Logger } from "../lib/log";
import { ConstraintError, StoreFullError, StoreUnavailableError } from "../db/errors";
import { AppError, methodNotAllowed } from "../shared/app-error";
import { describeValidation } from "../shared/validation";

export interface ErrorPluginOptions {
  /** The methods a path has, so a known path with a wrong method answers 405, not 404. */
  allowedMethods?: (pathname: string) => string[];
}

/**
 * The one error handler, registered globally so every plugin's routes answer in the
 * `{error: {code, message}}` shape (docs/api.md#errors). Unknown errors are logged with the request
 * id and answered with a generic 500 that leaks nothing.
 */
export function errorPlugin(log: Logger, options: ErrorPluginOptions = {}) {
  // Assigned when the request arrives, so errors raised before routing (a bad path, a
  // body refused while parsing) carry it too.
  const requestIds = new WeakMap<Request, string>();
  return new Elysia({ name: "errors" })
    .onRequest(({ request, set }) => {
      const requestId = crypto.randomUUID();
      requestIds.set(request, requestId);
      set.headers["x-request-id"] = requestId;
    })
    .derive({ as: "global" }, ({ request }) => ({ requestId: requestIds.get(request) ?? "-" }))
    .onError({ as: "global" }, (ctx) => {
      const { code, set, request } = ctx;
      const requestId = requestIds.get(request) ?? "-";
      // Errors thrown by the body parser reach us wrapped in Elysia's ParseError.
      const error =
        code === "PARSE" && (ctx.error as Error).cause instanceof AppError
          ? ((ctx.error as Error).cause as AppError)
          : ctx.error;
      if (error instanceof AppError) {
        Object.assign(set.headers, error.headers);
        return reply(set, error.status, error.errorCode, error.message);
      }
      switch (code) {
        case "VALIDATION": {
          const validation = error as ValidationError;
          if (validation.type === "response") {
            // A response that fails its own schema is our bug, never the caller's.
            log.error("response failed its schema", {
              requestId,
              path: new URL(request.url).pathname,
              problem: describeValidation(validation),
            });
            return reply(set, 500, "error", `internal error (request id ${requestId})`);
          }
          // A validation message may quote what was sent; a key sent in the wrong place must not echo back.
          return reply(set, 400, "invalid_request", redactSecrets(describeValidation(validation)));
        }
        case "PARSE":
          return reply(set, 400, "invalid_request", "request body is not valid JSON");
        case "NOT_FOUND": {
          const pathname = new URL(request.url).pathname;
          const allow = options.allowedMethods?.(pathname) ?? [];
          if (allow.length) {
            const refusal = methodNotAllowed(
              `${request.method} ${pathname}: method not allowed; this path takes ${allow.join(", ")}`,
              allow,
            );
            Object.assign(set.headers, refusal.headers);
            return reply(set, refusal.status, refusal.errorCode, refusal.message);
          }
          return reply(set, 404, "not_found", "no such route");
        }
        case "INVALID_COOKIE_SIGNATURE":
          return reply(set, 400, "invalid_request", "invalid cookie");
      }
      if (error instanceof StoreUnavailableError) {
        log.warn("store of record unavailable", { requestId, reason: error.message });
        set.headers["retry-after"] = "1";
        return reply(set, 503, "unavailable", "the store of record is unavailable; retry shortly");
      }
      if (error instanceof StoreFullError) {
        log.error("store of record: disk full", { requestId, reason: error.message });
        set.headers["retry-after"] = "60";
        return reply(
          set,
          507,
          "insufficient_storage",
          "the server's disk is full; nothing was written. Retry once space is freed",
        );
      }
      if (error instanceof ConstraintError) {
        return reply(set, 409, "conflict", "the request conflicts with existing data");
      }
      // Elysia builds its ValidationError by printing the rejected value; an object whose
      // `toString`/`valueOf` key holds data (not a function) makes that throw instead.
      if (isUnprintableRejectedValue(error)) {
        return reply(
          set,
          400,
          "invalid_request",
          "body: invalid; an object with a toString or valueOf key was sent where another type is expected",
        );
      }
      const status = (error as { status?: number }).status;
      if (status === 413) return reply(set, 413, "payload_too_large", "body: is too large");
      log.error("unhandled error", { requestId, error: error as Error });
      return reply(set, 500, "error", `internal error (request id ${requestId})`);
    });
}

function reply(
  set: { status?: number | string; headers: Record<string, unknown> },
  status: number,
  code: string,
  message: string,
) {
  set.status = status;
  set.headers["content-type"] = "application/json";
  return { error: { code, message } };
}

function isUnprintableRejectedValue(error: unknown): boolean {
  return (
    error instanceof TypeError &&
    /Cannot convert object to primitive value|No default value/.test(error.message) &&
    /ValidationError|mapValueError/.test(error.stack ?? "")
  );
}
