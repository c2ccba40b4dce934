/**
 * The one error model of the API: every failure leaves the server as
 * `{ error: { code, message } }` with the HTTP status carried here.
 *
 * The field is `errorCode`, not `code`: Elysia treats an error's `code`
 * property as its own error kind and would mis-route ours.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: ErrorCode,
    message: string,
    /** Extra response headers, e.g. `Retry-After` for 429. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "AppError";
  }
}

export type ErrorCode =
  | "invalid_request"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "payload_too_large"
  | "unsupported_media_type"
  | "method_not_allowed"
  | "not_implemented"
  | "rate_limited"
  | "unavailable"
  | "upstream_error"
  | "upstream_timeout"
  | "error";

export const badRequest = (message: string) => new AppError(400, "invalid_request", message);
export const unauthorized = (message: string) => new AppError(401, "unauthorized", message);
export const forbidden = (message: string) => new AppError(403, "forbidden", message);
export const notFound = (message: string) => new AppError(404, "not_found", message);
export const conflict = (message: string) => new AppError(409, "conflict", message);
export const payloadTooLarge = (message: string) => new AppError(413, "payload_too_large", message);
export const unsupportedMediaType = (message: string) => new AppError(415, "unsupported_media_type", message);
/** 405 with the `Allow` header listing the methods the path has. */
export const methodNotAllowed = (message: string, allow: string[]) =>
  new AppError(405, "method_not_allowed", message, { allow: allow.join(", ") });
/** A route of the API contract (docs/api.md) that this server does not serve yet. */
export const notImplemented = (message: string) => new AppError(501, "not_implemented", message);
