import { Elysia } from "elysia";
import { APP_CSP, loadAppAssets, type AppAssets, type AppFile } from "./assets";

const TYPES: Record<AppFile, string> = {
  "index.html": "text/html; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "app.css": "text/css; charset=utf-8",
};

/** Headers of every answer under /app: the strict CSP, no sniffing, no Referer, no framing, no caching of a stale build. */
export const APP_HEADERS = {
  "content-security-policy": APP_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "no-cache",
} as const;

const NOT_BUILT =
  "Mnemo's web app was not built into this server. Run `bun scripts/build-app.ts` (or `npm install`) and start the server again; the API works without it.\n";

function page(assets: AppAssets | null, path: string): Response {
  if (!assets)
    return new Response(NOT_BUILT, {
      status: 503,
      headers: { ...APP_HEADERS, "content-type": "text/plain; charset=utf-8" },
    });
  // /app/app.js and /app/app.css are files; every other /app path is a page of the history router.
  const name: AppFile = path === "/app/app.js" ? "app.js" : path === "/app/app.css" ? "app.css" : "index.html";
  return new Response(assets[name], { headers: { ...APP_HEADERS, "content-type": TYPES[name] } });
}

/**
 * The web app at /app (and every /app/* deep link, answered with its page), and `/`
 * sending a browser there. The files are embedded (assets.ts): nothing is read from disk.
 */
export function appPages() {
  const serve = async ({ request }: { request: Request }) => page(await loadAppAssets(), new URL(request.url).pathname);
  return new Elysia({ name: "app-pages" })
    .get("/", () => new Response(null, { status: 302, headers: { location: "/app/", "cache-control": "no-cache" } }), {
      detail: { hide: true },
    })
    .get("/app", serve, { detail: { hide: true } })
    .get("/app/*", serve, { detail: { hide: true } });
}
