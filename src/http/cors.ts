import { Elysia } from "elysia";
import { forbidden } from "../shared/app-error";
import { isLoopbackOrigin } from "../lib/loopback";

export interface CorsOptions {
  /**
   * Who may call from a browser page on another origin: `any` answers
   * `Access-Control-Allow-Origin: *` (docs/security.md); `loopback` (a server accepting mock tokens)
   * echoes pages served from this machine and refuses every other origin with a 403.
   */
  origins: "any" | "loopback";
  methods: string[];
  /** Request headers a preflight allows. */
  allowedHeaders: string[];
  /** Response headers a page may read. */
  exposeHeaders: string[];
  /** How long a browser may keep a preflight's answer. */
  maxAgeSeconds: number;
}

/**
 * Cross-origin requests, registered globally before routing. With `origins: "any"` the
 * answer does not depend on `Origin`, so no `Vary` is sent (the @elysiajs/cors plugin sent
 * `Vary: *`, which makes every response uncacheable); with `loopback` it does, and every
 * response says `Vary: Origin`. A preflight (`OPTIONS`) is answered here, 204.
 */
export function corsPlugin(options: CorsOptions) {
  const preflightHeaders = {
    "access-control-allow-methods": options.methods.join(", "),
    "access-control-allow-headers": options.allowedHeaders.join(", "),
    "access-control-max-age": String(options.maxAgeSeconds),
  };
  const exposed = options.exposeHeaders.join(", ");
  return new Elysia({ name: "cors" }).onRequest(({ request, set }) => {
    const origin = request.headers.get("origin");
    if (options.origins === "any") {
      set.headers["access-control-allow-origin"] = "*";
    } else {
      set.headers.vary = "Origin";
      // No Origin: not a cross-origin browser request (curl, an SDK, a same-origin GET).
      if (origin !== null) {
        if (!isLoopbackOrigin(origin)) {
          throw forbidden(
            `origin: cross-origin requests from '${origin}' are refused: this server accepts mock tokens, so only pages on this machine (http://localhost, 127.0.0.1, [::1]) may call it`,
          );
        }
        set.headers["access-control-allow-origin"] = origin;
      }
    }
    set.headers["access-control-expose-headers"] = exposed;
    if (request.method === "OPTIONS") {
      Object.assign(set.headers, preflightHeaders);
      return new Response(null, { status: 204 });
    }
  });
}
