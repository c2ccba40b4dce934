import { t } from "elysia";
import type { Principal } from "../auth/service";
import { errorResponses } from "../shared/error-body";
import { checkBeforeBody } from "../lib/header-checks";
import { createRouter } from "../lib/router";
import { OnboardingResult, SyncResult, WebhookBody, WebhookParams } from "./model";
import type { IdentityService } from "./service";

/**
 * `POST /api/v1/webhooks/:webhookId/sync`: the sync webhook (`WEBHOOK_ID_SYNC`) and the
 * onboarding webhook (`WEBHOOK_ID_ONBOARDING`) share the path. The id and the ID token
 * are checked before the body is read (a header check: 404, then 401, then 400).
 */
export function webhookRoutes(identity: IdentityService) {
  const principals = new WeakMap<Request, Principal>();
  return createRouter().post(
    "/api/v1/webhooks/:webhookId/sync",
    async ({ request, params, body }) => {
      const principal = principals.get(request)!;
      return identity.webhookKind(params.webhookId) === "sync"
        ? identity.sync(principal.userId, body)
        : identity.onboard(principal.userId, body);
    },
    {
      params: WebhookParams,
      body: WebhookBody,
      transform: checkBeforeBody(async ({ request, params }) => {
        identity.webhookKind(params.webhookId ?? "");
        principals.set(request, await identity.authenticate(request.headers.get("authorization")));
      }),
      response: { 200: t.Union([SyncResult, OnboardingResult]), ...errorResponses() },
      detail: {
        tags: ["identity"],
        summary:
          "Identity-provider webhooks: sync (status, wrapped escrowed key, developer token) or onboarding (profile, key escrow); ID tokens only",
      },
    },
  );
}
