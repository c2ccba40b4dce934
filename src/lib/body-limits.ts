/** How much JSON a route accepts: raw bytes on the wire, nesting depth, values. */
export interface JsonLimits {
  bytes: number;
  /** Nested arrays/objects, the body itself counting as level 1. */
  depth: number;
  /** Arrays, objects, strings, numbers, booleans and nulls (object keys not counted). */
  nodes: number;
}

const KB = 1024;
const MB = 1024 * 1024;

/** Nesting depth of every JSON body, the body itself counting as level 1. */
export const MAX_JSON_DEPTH = 32;

/**
 * The largest body any request may declare or send, whatever its route: checked on
 * Content-Length before routing. Route limits below are all smaller.
 */
export const OUTER_BODY_LIMIT = 32 * MB;

/** Routes without a limit of their own: searches, context build, workspaces, chat threads. */
export const DEFAULT_BODY_LIMITS: JsonLimits = { bytes: 1 * MB, depth: MAX_JSON_DEPTH, nodes: 100_000 };

/**
 * Per-route body limits, sized to admit the largest valid body of the route with room for
 * JSON escaping (a quote or newline doubles on the wire, a control character is six bytes):
 * - a memory: 51,200 bytes of content plus 16 KB of metadata → 512 KB;
 * - a chat message: 200 KB of content → 2 MB;
 * - a document or note write: a 5 MB payload plus 5 MB of markdown, each at up to twice
 *   its size once escaped, with the blocks beside them → 20 MB and a million values;
 * - a notebook registry or a manifest / block index / edges PUT: 5 MB → 12 MB.
 * Keys are `METHOD path` with Elysia's path pattern, without a trailing slash.
 */
const ROUTE_BODY_LIMITS: Record<string, Partial<JsonLimits>> = {
  "POST /v1/memories": { bytes: 512 * KB },
  // An upload part: 8 MB decoded is 11.2 MB of base64.
  "POST /v1/uploads/:uploadId/part": { bytes: 12 * MB },
  "POST /v1/workspaces/:workspaceId/chats/:threadId/messages": { bytes: 2 * MB },
  ...same({ bytes: 20 * MB, nodes: 1_000_000 }, [
    "POST /v1/documents",
    "PATCH /v1/documents/:id",
    "POST /v1/workspaces/:workspaceId/documents",
    "PUT /v1/workspaces/:workspaceId/documents/:documentId",
    "POST /v1/workspaces/:workspaceId/notes",
    "PATCH /v1/workspaces/:workspaceId/notes/:noteId",
  ]),
  ...same({ bytes: 12 * MB, nodes: 1_000_000 }, [
    "POST /v1/workspaces/:workspaceId/notebooks",
    "PUT /v1/workspaces/:workspaceId/vector-manifest",
    "PUT /v1/workspaces/:workspaceId/search/block-index",
    "PUT /v1/workspaces/:workspaceId/graph/block-edges",
  ]),
};

/**
 * The presigned file PUT streams raw bytes (no JSON parsing) under its own limit,
 * MNEMO_MAX_FILE_BYTES, enforced by the files service while it reads.
 */
export function isStreamedUpload(request: Request): boolean {
  return request.method === "PUT" && /^\/v1\/workspaces\/[^/]+\/files\/[^/]+\/?$/.test(new URL(request.url).pathname);
}

/** The limits of a route, by method and Elysia path pattern (`/v1/memories/:id`). */
export function bodyLimitsFor(method: string, pattern: string): JsonLimits {
  const key = `${method.toUpperCase()} ${pattern.length > 1 ? pattern.replace(/\/+$/, "") : pattern}`;
  return { ...DEFAULT_BODY_LIMITS, ...ROUTE_BODY_LIMITS[key] };
}

/** Every route with a limit of its own, for the README and the tests. */
export function routeBodyLimits(): Array<{ route: string } & JsonLimits> {
  return Object.entries(ROUTE_BODY_LIMITS).map(([route, limits]) => ({ route, ...DEFAULT_BODY_LIMITS, ...limits }));
}

function same(limits: Partial<JsonLimits>, routes: string[]): Record<string, Partial<JsonLimits>> {
  return Object.fromEntries(routes.map((route) => [route, limits]));
}
