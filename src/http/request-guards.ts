import { Elysia } from "elysia";
import { badRequest, payloadTooLarge, unsupportedMediaType } from "../shared/app-error";
import { OUTER_BODY_LIMIT } from "../lib/body-limits";
import { describeBytes } from "../lib/bytes";
import { parseJsonText, readBodyText } from "./json-body";
import { createGate, LARGE_BODIES_AT_ONCE, LARGE_BODY_BYTES } from "./large-bodies";
import { NUL_PROBLEM } from "../lib/nul-text";
import type { RouteCatalog } from "./route-catalog";

/**
 * Request-level hardening, registered globally before every route:
 * - a declared body over the outer limit, a path whose percent-encoding does not
 *   decode, or a path parameter or query value holding U+0000 (`%00`, see nul-text.ts)
 *   is refused before routing;
 * - the one JSON body parser of the app: a route that declares no body never reads one;
 *   a route that does first runs its header checks (authentication and scope, see
 *   header-checks.ts), so a refused caller's body is never read, then gets only
 *   `application/json`, at most its size limit (its `bodyLimit` option; counted while a chunked body arrives),
 *   checked for depth, value count and unpaired surrogates in one linear pass before
 *   JSON.parse, validation or any stringify.
 */
export function requestGuards(catalog: RouteCatalog) {
  // Large bodies are handled one at a time per server, from their parse to their answer
  // (large-bodies.ts): the body is read first, so a slow sender holds no place.
  const largeBodies = createGate(LARGE_BODIES_AT_ONCE);
  const held = new WeakMap<Request, () => void>();
  const release = ({ request }: { request: Request }) => {
    held.get(request)?.();
    held.delete(request);
  };
  return new Elysia({ name: "request-guards" })
    .onAfterResponse({ as: "global" }, release)
    .onError({ as: "global" }, release)
    .onRequest(({ request }) => {
      const declared = request.headers.get("content-length");
      // A streamed route (the presigned file PUT) reads raw bytes under a limit of its own.
      if (
        declared !== null &&
        Number(declared) > OUTER_BODY_LIMIT &&
        !catalog.routeFor(request.method, new URL(request.url).pathname)?.streamed
      ) {
        throw payloadTooLarge(
          `body: is larger than ${describeBytes(OUTER_BODY_LIMIT)}, the largest body this server accepts`,
        );
      }
      checkPathEncoding(request.url);
      checkNulInUrl(request, catalog);
    })
    .onParse({ as: "global" }, async ({ request, path }, contentType) => {
      // Elysia does not tell a parse hook its route; the catalog finds it as the router did.
      const route = catalog.routeFor(request.method, path);
      // A value other than undefined stops Elysia's own parsers from reading the body.
      // No route: a CORS preflight or the like, which takes no body either.
      if (!route?.takesBody) return null;
      for (const check of route.headerChecks) await check({ request, params: route.params });
      if (!request.body) return undefined;
      checkContentType(contentType, request.headers.get("content-type"));
      const text = await readBodyText(request, route.limits.bytes);
      if (text.length >= LARGE_BODY_BYTES) held.set(request, await largeBodies.acquire());
      return parseJsonText(text, route.limits);
    });
}

function checkContentType(mediaType: string, header: string | null): void {
  const type = mediaType.trim().toLowerCase();
  if (type !== "application/json" && !/^application\/[a-z0-9.+-]+\+json$/.test(type)) {
    throw unsupportedMediaType(`content-type: must be application/json, not ${type ? `'${type}'` : "missing"}`);
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(header ?? "")?.[1]?.toLowerCase();
  if (charset && charset !== "utf-8" && charset !== "utf8") {
    throw unsupportedMediaType(`content-type: charset must be utf-8, not '${charset}'`);
  }
}

/** A path like `/v1/memories/%E0%A4%A` cannot be decoded: say so instead of a 404 or a 400 about a missing id. */
function checkPathEncoding(url: string): void {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1) return;
  const query = url.indexOf("?", start);
  const path = query === -1 ? url.slice(start) : url.slice(start, query);
  if (!path.includes("%")) return;
  try {
    decodeURIComponent(path);
  } catch {
    throw badRequest(`path: malformed percent-encoding in '${path}'`);
  }
}

/**
 * `%00` in a path segment or the query string: refused naming the parameter
 * (`path.id`, `query.q`). Only URLs holding `%00` pay for the decoding.
 */
function checkNulInUrl(request: Request, catalog: RouteCatalog): void {
  const url = request.url;
  if (!url.includes("%00")) return;
  const { pathname, searchParams } = new URL(url);
  const segments = pathname.split("/");
  const nulAt = segments.findIndex((segment) => segment.includes("%00") && safeDecode(segment).includes("\0"));
  if (nulAt >= 0) {
    const pattern = catalog.routeFor(request.method, pathname)?.pattern.split("/")[nulAt];
    const name = pattern?.startsWith(":") ? pattern.slice(1) : null;
    throw badRequest(`${name ? `path.${name}` : "path"}: ${NUL_PROBLEM}`);
  }
  for (const [key, value] of searchParams) {
    if (key.includes("\0")) throw badRequest(`query: a parameter name ${NUL_PROBLEM}`);
    if (value.includes("\0")) throw badRequest(`query.${key}: ${NUL_PROBLEM}`);
  }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
