import { Elysia } from "elysia";

/** How much JSON a route accepts: raw bytes on the wire, nesting depth, values. */
export interface JsonLimits {
  bytes: number;
  /** Nested arrays/objects, the body itself counting as level 1. */
  depth: number;
  /** Arrays, objects, strings, numbers, booleans and nulls (object keys not counted). */
  nodes: number;
}

export const KB = 1024;
export const MB = 1024 * 1024;

/** Nesting depth of every JSON body, the body itself counting as level 1. */
export const MAX_JSON_DEPTH = 32;

/**
 * The largest body any request may declare or send, whatever its route: checked on
 * Content-Length before routing. Route limits are all smaller.
 */
export const OUTER_BODY_LIMIT = 32 * MB;

/** Routes without a limit of their own: searches, context build, workspaces, chat threads. */
export const DEFAULT_BODY_LIMITS: JsonLimits = { bytes: 1 * MB, depth: MAX_JSON_DEPTH, nodes: 100_000 };

/**
 * A route's own body limit, declared on the route as its `bodyLimit` option (the rest
 * comes from DEFAULT_BODY_LIMITS), sized to admit the route's largest valid body with room
 * for JSON escaping (a quote or newline doubles on the wire, a control character is six
 * bytes). `"streamed"`: the route reads raw bytes itself under a limit of its own (the
 * presigned file PUT, MNEMO_MAX_FILE_BYTES), so neither the JSON parser nor the outer bound applies.
 *
 * @example
 * .post("/v1/memories", handler, { body: CreateMemoryBody, bodyLimit: { bytes: 512 * KB } })
 */
export type BodyLimit = Partial<JsonLimits> | "streamed";

/**
 * The `bodyLimit` route option. It adds no hook: the route catalog reads the option
 * from the route (http/route-catalog.ts) and the body parser applies it.
 */
export const bodyLimitOption = new Elysia({ name: "body-limit" }).macro({
  bodyLimit: (_limit: BodyLimit) => ({}),
});

/** The limits a route's `bodyLimit` option gives, defaults filled in; null for a streamed route. */
export function jsonLimitsOf(limit: BodyLimit | undefined): JsonLimits | null {
  if (limit === "streamed") return null;
  return { ...DEFAULT_BODY_LIMITS, ...limit };
}
