import { Elysia, ValidationError } from "elysia";
import type { Logger } from "../lib/log";
import { ConstraintError, StoreUnavailableError } from "../db/errors";
import { AppError } from "./app-error";

/**
 * The one error handler, registered globally so every plugin's routes answer in the
 * spec's `{error: {code, message}}` shape. Unknown errors are logged with the request
 * id and answered with a generic 500 that leaks nothing.
 */
export function errorPlugin(log: Logger) {
  return new Elysia({ name: "errors" })
    .derive({ as: "global" }, ({ set }) => {
      const requestId = crypto.randomUUID();
      set.headers["x-request-id"] = requestId;
      return { requestId };
    })
    .onError({ as: "global" }, (ctx) => {
      const { error, code, set } = ctx;
      const requestId = (ctx as { requestId?: string }).requestId ?? "-";
      if (error instanceof AppError) {
        Object.assign(set.headers, error.headers);
        return reply(set, error.status, error.errorCode, error.message);
      }
      switch (code) {
        case "VALIDATION":
          return reply(set, 400, "invalid_request", describeValidation(error as ValidationError));
        case "PARSE":
          return reply(set, 400, "invalid_request", "request body is not valid JSON");
        case "NOT_FOUND":
          return reply(set, 404, "not_found", "no such route");
        case "INVALID_COOKIE_SIGNATURE":
          return reply(set, 400, "invalid_request", "invalid cookie");
      }
      if (error instanceof StoreUnavailableError) {
        log.warn("store of record unavailable", { requestId, reason: error.message });
        set.headers["retry-after"] = "1";
        return reply(set, 503, "unavailable", "the store of record is unavailable; retry shortly");
      }
      if (error instanceof ConstraintError) {
        return reply(set, 409, "conflict", "the request conflicts with existing data");
      }
      const status = (error as { status?: number }).status;
      if (status === 413) return reply(set, 413, "payload_too_large", "request body is too large");
      log.error("unhandled error", { requestId, error: error as Error });
      return reply(set, 500, "error", `internal error (request id ${requestId})`);
    });
}

function reply(set: { status?: number | string; headers: Record<string, unknown> }, status: number, code: string, message: string) {
  set.status = status;
  set.headers["content-type"] = "application/json";
  return { error: { code, message } };
}

/** Turns TypeBox's first error into "field: problem", naming the field by its path. */
export function describeValidation(error: ValidationError): string {
  const where = error.type === "body" ? "body" : error.type;
  const first = safeAll(error)[0] as { path?: string; message?: string; summary?: string; schema?: { description?: string } } | undefined;
  if (!first) return `invalid ${where}`;
  const field = (first.path ?? "").replace(/^\//, "").replace(/\//g, ".");
  // Unions report only "Expected union value"; their summary says what was expected.
  const problem = (first.message === "Expected union value" ? first.summary : first.message) ?? first.summary ?? "is invalid";
  return field ? `${field}: ${problem.charAt(0).toLowerCase()}${problem.slice(1)}` : `${where}: ${problem.charAt(0).toLowerCase()}${problem.slice(1)}`;
}

function safeAll(error: ValidationError): unknown[] {
  try {
    return error.all ?? [];
  } catch {
    return [];
  }
}
