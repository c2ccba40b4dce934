import { t } from "elysia";

/** The error body of every error (docs/api.md#errors), used as the response schema of every error status. */
export const ErrorBody = t.Object(
  {
    error: t.Object({
      code: t.String({ description: "machine-readable code, e.g. invalid_request, unauthorized, not_found" }),
      message: t.String({ description: "what went wrong, naming the field when a field is at fault" }),
    }),
  },
  { description: "Error", additionalProperties: false },
);

/**
 * Every error status a route may answer. A route that spreads all of them has its
 * OpenAPI entry narrowed to the ones it can answer (`src/http/openapi-refine.ts`).
 */
export const ERROR_STATUSES = [400, 401, 403, 404, 409, 413, 415, 429, 500, 503] as const;

/** Response schemas for every error status, to spread next to a route's success schema. */
export function errorResponses() {
  const out: Record<number, typeof ErrorBody> = {};
  for (const status of ERROR_STATUSES) out[status] = ErrorBody;
  return out as { [K in (typeof ERROR_STATUSES)[number]]: typeof ErrorBody };
}

/** Response schemas for the listed error statuses only (kept as listed in the OpenAPI document, e.g. 429, 502, 504). */
export const errorsFor = <S extends number>(...statuses: S[]) =>
  Object.fromEntries(statuses.map((s) => [s, ErrorBody])) as Record<S, typeof ErrorBody>;

/**
 * OpenAPI entries (not validation schemas) for the error statuses of a route whose success
 * is not JSON (a file download, the MCP transport), which therefore declares `detail.responses` itself.
 */
export const errorDocs = (statuses: number[]) =>
  Object.fromEntries(
    statuses.map((status) => [
      status,
      {
        description: "Error",
        content: {
          "application/json": {
            schema: {
              type: "object" as const,
              required: ["error"],
              properties: {
                error: {
                  type: "object" as const,
                  required: ["code", "message"],
                  properties: { code: { type: "string" as const }, message: { type: "string" as const } },
                },
              },
            },
          },
        },
      },
    ]),
  );
