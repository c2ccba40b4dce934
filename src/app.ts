import type { SealBinding } from "./crypto/binding";
import { Elysia } from "elysia";
import { completionRoutes } from "./completions";
import { usageRoutes } from "./usage";
import { chatRoutes } from "./chats";
import { contextRoutes } from "./context";
import { derivedIndexRoutes } from "./derived-index";
import { fileRoutes } from "./files";
import { uploadRoutes } from "./uploads";
import { documentRoutes } from "./documents";
import { documentsQueryRoutes } from "./documents-query";
import { errorPlugin } from "./http/error-plugin";
import { createHealth, healthRoutes } from "./health";
import { refineOpenApi } from "./http/openapi-refine";
import { openApiJson } from "./http/openapi-json";
import { openApiUi } from "./http/openapi-ui";
import { corsPlugin } from "./http/cors";
import { hostCheck, namesOfThisServer } from "./http/host-check";
import { requestGuards } from "./http/request-guards";
import { createRouteCatalog, type RouteCatalog } from "./http/route-catalog";
import { mcpRoutes } from "./mcp";
import { createOutbox } from "./search";
import { captureSettingsRoutes, formationRoutes } from "./formation";
import { memoryRoutes } from "./memories";
import { noteRoutes } from "./notes";
import { meRoutes } from "./profiles";
import { webhookRoutes } from "./identity";
import type { Services } from "./compose";
import { workspaceRoutes } from "./workspaces";
import { appPages, webAppRoutes } from "./web-app";
import { keyRoutes } from "./keys";

/** Request headers a browser may send (docs/security.md), exactly. */
export const CORS_ALLOWED_HEADERS = [
  "Content-Type",
  "Authorization",
  "X-Backend-Project",
  "X-Backend-Key",
  "X-Proxy-Decrypt",
  "X-Client-Key",
];
/** What MCP's Streamable HTTP transport adds (`/mcp`), so that a browser-based MCP client works too. */
export const CORS_MCP_HEADERS = ["Mcp-Session-Id", "Mcp-Protocol-Version"];

/** Where the OpenAPI document is served; its response is refined on the way out. */
const OPENAPI_JSON = "/openapi/json";

/**
 * The OpenAPI document at `/openapi/json` (and a browsable page at `/openapi`), refined
 * on the way out by a hook local to this wrapper, so other routes pay nothing for it.
 */
function openApiDocument(catalog: RouteCatalog) {
  return new Elysia({ name: "openapi-document" })
    .onAfterHandle(({ response }) =>
      response && typeof response === "object" && "paths" in response
        ? refineOpenApi(response as Record<string, unknown>, catalog.bodySchema)
        : undefined,
    )
    .use(
      // The document only (the page comes from openApiUi: Scalar embedded, not loaded from a CDN), built on its first request.
      openApiJson({
        specPath: OPENAPI_JSON,
        documentation: {
          info: { title: "Mnemo", version: "1.0.0", description: "Local-first knowledge and memory server" },
          components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
          security: [{ bearer: [] }],
        },
      }),
    )
    .use(openApiUi({ title: "Mnemo API", specPath: OPENAPI_JSON }));
}

/**
 * Builds the HTTP app from its services. Never listens: `server.ts` and tests do.
 * `publicUrl()` is where clients reach the server (MNEMO_PUBLIC_URL, else the listening address).
 */
export function buildApp(services: Services, publicUrl: () => string) {
  // The catalog reads the finished app's routes at request time (405 Allow, who takes a body).
  const catalog = createRouteCatalog(() => app.routes);
  // The PKMS routes' `decrypt: true` option (docs/encryption.md#reverse-proxy-mode).
  const encryption = {
    keys: services.clientKeys,
    proxyMode: services.config.encryption.proxyMode,
    tagCheck: (bindings: SealBinding[]) => services.sealTags.checker(services.store.db, bindings),
  };
  const app = new Elysia({ normalize: false })
    .use(errorPlugin(services.log, { allowedMethods: catalog.allowedMethods }))
    // Before anything else: with mock tokens, a request to a name that is not this machine's (DNS rebinding) is refused.
    .use(
      services.config.allowMockTokens
        ? hostCheck({ alsoAllowed: namesOfThisServer(services.config) })
        : new Elysia({ name: "host-check" }),
    )
    // Before the request guards, so that their refusals (413, 400) are readable by a page too.
    .use(
      corsPlugin({
        // Mock tokens let anyone act as any user: no page elsewhere may use them through a visitor's browser.
        origins: services.config.allowMockTokens ? "loopback" : "any",
        methods: ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
        allowedHeaders: [...CORS_ALLOWED_HEADERS, ...CORS_MCP_HEADERS],
        exposeHeaders: [
          "Mcp-Session-Id",
          "X-Request-Id",
          "Server-Timing",
          "Retry-After",
          "X-Svc-Index-Lag",
          "X-Svc-Shimmer",
          "X-Svc-Memory-Count",
          "X-Svc-Notes-Count",
          "X-Svc-Overhead-Ms",
          "X-RateLimit-Limit",
          "X-RateLimit-Remaining",
          "X-RateLimit-Reset",
          "X-Svc-Decrypt-Errors",
          "X-Svc-Duplicate",
          "X-Svc-Remember",
          "X-Svc-Thread",
        ],
        maxAgeSeconds: 600,
      }),
    )
    .use(requestGuards(catalog))
    .use(openApiDocument(catalog))
    .use(
      healthRoutes(
        services.auth,
        createHealth({
          store: services.store,
          indexer: services.indexer,
          outbox: createOutbox(services.store),
          embedder: services.embedder !== null,
          extractionJobs: services.capture.counts,
        }),
      ),
    )
    .use(meRoutes(services.auth, services.profiles))
    .use(webhookRoutes(services.identity))
    .use(formationRoutes(services.auth, services.formation, services.capture))
    .use(captureSettingsRoutes(services.auth, services.capture))
    .use(memoryRoutes(services.auth, services.memories))
    .use(contextRoutes(services.auth, services.context))
    .use(workspaceRoutes(services.auth, services.workspaces, services.workspaceRemoval, encryption))
    .use(documentsQueryRoutes(services.auth, services.documentsQuery))
    .use(documentRoutes(services.auth, services.documents, encryption))
    .use(noteRoutes(services.auth, services.notes, encryption))
    .use(chatRoutes(services.auth, services.chats, encryption))
    .use(derivedIndexRoutes(services.auth, services.derivedIndex, encryption))
    .use(fileRoutes(services.auth, services.files, encryption, publicUrl))
    .use(uploadRoutes(services.auth, services.uploads, encryption))
    .use(completionRoutes(services.auth, services.completions, services.models))
    .use(usageRoutes(services.auth, services.usage))
    // The web app (src/web-app): its pages at /app, sign-in and out; and API keys, which it manages.
    .use(appPages())
    .use(webAppRoutes(services.auth, services.webAppSessions))
    .use(keyRoutes(services.auth, services.credentials))
    .use(mcpRoutes({ auth: services.auth, services, sessions: services.mcpSessions, log: services.log }));
  return app;
}
export type App = ReturnType<typeof buildApp>;
