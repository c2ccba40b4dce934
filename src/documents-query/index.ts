import { authPlugin } from "../auth/plugin";
import type { AuthService } from "../auth/service";
import { errorResponses } from "../shared/error-body";
import { createRouter } from "../lib/router";
import { DocumentsQueryBody, DocumentsQueryResponse } from "./model";
import type { DocumentsQueryService } from "./service";

/** `POST /v1/documents/query` (docs/api.md#documents-query). */
export function documentsQueryRoutes(auth: AuthService, service: DocumentsQueryService) {
  return createRouter()
    .use(authPlugin(auth))
    .post("/v1/documents/query", async ({ principal, body }) => service.query(principal.userId, body), {
      auth: "memory:read",
      body: DocumentsQueryBody,
      response: { 200: DocumentsQueryResponse, ...errorResponses() },
      detail: {
        tags: ["documents"],
        summary: "Search document blocks and chat messages (and memories, files) semantic-first",
      },
    });
}
