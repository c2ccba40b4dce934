/**
 * `GET <specPath>`: the OpenAPI document of every route, as `@elysiajs/openapi`'s plugin
 * serves it with `provider: null` (no page: src/http/openapi-ui.ts serves ours), built the
 * same way, by the same `toOpenAPISchema`, on the first request and kept. The plugin's
 * entry module (267 KB of JS, ~10 ms of a start on the 2-core VM) is not loaded at start:
 * only its `openapi` module, which holds `toOpenAPISchema`, on that first request.
 */
import { Elysia } from "elysia";

/** The OpenAPI version the plugin writes by default. */
const OPENAPI_VERSION = "3.1.2";

/** What of the document the server sets itself; the rest comes from the routes. */
export interface OpenApiDocumentation {
  info: { title?: string; version?: string; description?: string };
  components?: { securitySchemes?: Record<string, unknown>; schemas?: Record<string, unknown> };
  security?: Array<Record<string, string[]>>;
  tags?: Array<{ name: string; description?: string }>;
  paths?: Record<string, unknown>;
}

/** The route; the document it answers is built once, from the routes of the app it is used in. */
export function openApiJson(options: { specPath: string; documentation: OpenApiDocumentation }) {
  const { documentation } = options;
  // The plugin's name, so that the app dedupes it as it would the plugin.
  const app = new Elysia({ name: "@elysiajs/openapi" });
  let document: Promise<Record<string, unknown>> | undefined;
  const build = async () => {
    const { toOpenAPISchema } = await import("@elysiajs/openapi/openapi");
    // `app` answers with the routes of the app it is used in (`getGlobalRoutes`), as the plugin's own instance does.
    const {
      paths,
      components: { schemas },
    } = toOpenAPISchema(app as never, undefined, undefined, undefined, OPENAPI_VERSION);
    return {
      ...documentation,
      openapi: OPENAPI_VERSION,
      tags: documentation.tags,
      info: {
        title: "Elysia Documentation",
        description: "Development documentation",
        version: "0.0.0",
        ...documentation.info,
      },
      paths: { ...paths, ...documentation.paths },
      components: { ...documentation.components, schemas: { ...schemas, ...documentation.components?.schemas } },
    };
  };
  return app.get(
    options.specPath,
    async function openAPISchema() {
      document ??= build().catch((error) => {
        document = undefined;
        throw error;
      });
      return await document;
    },
    {
      error({ error }) {
        console.log("[@elysiajs/openapi] error at specPath");
        console.warn(error);
      },
      detail: { hide: true },
    },
  );
}
