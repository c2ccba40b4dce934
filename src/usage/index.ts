import { authPlugin } from "../auth/plugin";
import type { AuthService } from "../auth/service";
import { errorsFor } from "../shared/error-body";
import { createRouter } from "../lib/router";
import { CreditsResponse, DailyUsageResponse, UsageResponse } from "./model";
import type { UsageService } from "./service";

/** `GET /v1/usage` and `GET /v1/credits` (docs/completions.md#usage-and-quota; scope usage:read). */
export function usageRoutes(auth: AuthService, usage: UsageService) {
  return createRouter({ prefix: "/v1" })
    .use(authPlugin(auth))
    .get("/usage", ({ principal }) => usage.usage(principal.userId), {
      auth: "usage:read",
      response: { 200: UsageResponse, ...errorsFor(401, 403, 500, 503) },
      detail: { tags: ["usage"], summary: "Tokens and completions used this month (UTC)" },
    })
    .get("/usage/daily", ({ principal }) => usage.daily(principal.userId), {
      auth: "usage:read",
      response: { 200: DailyUsageResponse, ...errorsFor(401, 403, 500, 503) },
      detail: { tags: ["usage"], summary: "Tokens and completions per UTC day this month" },
    })
    .get("/credits", ({ principal }) => usage.credits(principal.userId), {
      auth: "usage:read",
      response: { 200: CreditsResponse, ...errorsFor(401, 403, 500, 503) },
      detail: { tags: ["usage"], summary: "The monthly token allowance: used, limit, remaining" },
    });
}
