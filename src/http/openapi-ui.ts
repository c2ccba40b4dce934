/**
 * The browsable API reference at `/openapi`, served entirely by this server: Scalar's
 * standalone bundle is embedded (into the compiled binary too) and served beside the page,
 * so the page works offline and loads nothing from a CDN. Fonts stay the browser's own
 * (`withDefaultFonts: false`): Scalar would fetch them from fonts.scalar.com otherwise.
 * Scalar's hosted extras (Ask AI, Generate MCP, the developer toolbar) are turned off:
 * they send the document to scalar.com, which a local-first server should not offer.
 */
import { Elysia } from "elysia";

/**
 * Where Scalar's bundle is read from, imported on the first request for it (so a start
 * reaches no part of it). Not in the package's `exports`, hence the path. `type: "file"`
 * embeds it into `bun build --compile` output; the import is then a path to read it from.
 */
const scalarBundlePath = async (): Promise<string> =>
  // @ts-expect-error a 4 MB browser script, imported for its path, with no declaration
  (await import("../../node_modules/@scalar/api-reference/dist/browser/standalone.js", { with: { type: "file" } }))
    .default as string;

/** The asset route, relative to the page like `openapi/json`. */
export const SCALAR_ASSET_PATH = "/openapi/scalar.js";

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** The page: Scalar reads its configuration from the `#api-reference` script element. */
export function openApiPage(options: { title: string; specPath: string }): string {
  // `specPath` is absolute ("/openapi/json"); relative URLs keep working behind a path prefix.
  const configuration = {
    url: options.specPath.replace(/^\//, ""),
    withDefaultFonts: false,
    telemetry: false,
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: "never",
  };
  return `<!doctype html>
<html>
  <head>
    <title>${escapeHtml(options.title)}</title>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <style>body { margin: 0; }</style>
  </head>
  <body>
    <script id="api-reference" data-configuration="${escapeHtml(JSON.stringify(configuration))}"></script>
    <script src="${SCALAR_ASSET_PATH.replace(/^\//, "")}"></script>
  </body>
</html>`;
}

/** Routes `GET /openapi` (the page) and `GET /openapi/scalar.js` (the embedded bundle). */
export function openApiUi(options: { title: string; specPath: string }) {
  const html = openApiPage(options);
  return new Elysia({ name: "openapi-ui" })
    .get("/openapi", () => new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } }), {
      detail: { hide: true },
    })
    .get(
      SCALAR_ASSET_PATH,
      async () =>
        new Response(Bun.file(await scalarBundlePath()), {
          // The bundle changes only with the package version, i.e. with a new build.
          headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=86400" },
        }),
      { detail: { hide: true } },
    );
}
