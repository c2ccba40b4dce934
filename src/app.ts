import { cors } from "@elysiajs/cors";
import { openapi } from "@elysiajs/openapi";
import { Elysia } from "elysia";
import { chatRoutes } from "./chats";
import { contextRoutes } from "./context";
import { derivedIndexRoutes } from "./derived-index";
import { documentRoutes } from "./documents";
import { documentsQueryRoutes } from "./documents-query";
import { errorPlugin } from "./errors/plugin";
import { healthRoutes } from "./health";
import { memoryRoutes } from "./memories";
import { noteRoutes } from "./notes";
import { meRoutes } from "./profiles";
import type { Services } from "./services";
import { workspaceRoutes } from "./workspaces";

/** Paths are shown as they are; an object-store URI only as bucket and prefix. */
const redactIndexUri = (uri: string) => uri.replace(/^(s3:\/\/)[^@/]*@/, "$1");

/** Request headers a browser may send (spec §5), exactly. */
export const CORS_ALLOWED_HEADERS = ["Content-Type", "Authorization", "X-Backend-Project", "X-Backend-Key", "X-Proxy-Decrypt", "X-Client-Key"];

/** Builds the HTTP app from its services. Never listens: `server.ts` and tests do. */
export function buildApp(services: Services) {
  return new Elysia({ normalize: false })
    .use(errorPlugin(services.log))
    .use(
      cors({
        origin: "*",
        methods: ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
        allowedHeaders: CORS_ALLOWED_HEADERS,
        exposeHeaders: ["X-Request-Id", "Server-Timing", "Retry-After", "X-Svc-Index-Lag", "X-Svc-Shimmer", "X-Svc-Memory-Count", "X-Svc-Notes-Count"],
        credentials: false,
        maxAge: 600,
      }),
    )
    .use(
      openapi({
        path: "/openapi",
        documentation: {
          info: { title: "Mnemo", version: "1.0.0", description: "Local-first knowledge and memory server" },
          components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
          security: [{ bearer: [] }],
        },
      }),
    )
    .use(
      healthRoutes(async () => {
        const writerId = await services.indexer.currentWriter().catch(() => null);
        return {
          status: "ok" as const,
          store: services.store.dialect,
          index: { uri: redactIndexUri(services.lance.uri), writer: services.indexer.isWriter, replicaId: services.indexer.holderId, writerId },
        };
      }),
    )
    .use(meRoutes(services.auth, services.profiles, services.store))
    .use(memoryRoutes(services.auth, services.memories))
    .use(contextRoutes(services.auth, services.context))
    .use(workspaceRoutes(services.auth, services.workspaces))
    .use(documentsQueryRoutes(services.auth, services.documentsQuery))
    .use(documentRoutes(services.auth, services.documents))
    .use(noteRoutes(services.auth, services.notes))
    .use(chatRoutes(services.auth, services.chats))
    .use(derivedIndexRoutes(services.auth, services.derivedIndex));
}
export type App = ReturnType<typeof buildApp>;
