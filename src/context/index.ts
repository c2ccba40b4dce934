import { authPlugin } from "../auth/plugin";
import type { AuthService } from "../auth/service";
import { errorResponses } from "../shared/error-body";
import { createRouter } from "../lib/router";
import { BuildContextBody, BuiltContext } from "./model";
import type { ContextService } from "./service";

/** `POST /v1/context/build` (docs/api.md#core-and-memories). */
export function contextRoutes(auth: AuthService, context: ContextService) {
  return createRouter({ prefix: "/v1/context" })
    .use(authPlugin(auth))
    .post("/build", async ({ principal, body }) => context.build(principal.userId, body), {
      auth: "memory:read",
      body: BuildContextBody,
      response: { 200: BuiltContext, ...errorResponses() },
      detail: { tags: ["memories"], summary: "Assemble memories and notes into one prompt-ready text block" },
    });
}
