import { authPlugin } from "../auth/plugin";
import { ALL_SCOPES } from "../auth/scopes";
import type { CredentialsService, ApiKeyInfo } from "../auth/credentials-service";
import type { AuthService } from "../auth/service";
import { checkBeforeBody } from "../lib/header-checks";
import { createRouter } from "../lib/router";
import { notFound } from "../shared/app-error";
import { errorResponses } from "../shared/error-body";
import { devTokenRoutes } from "./dev-tokens";
import { requireKeyManager } from "./manager";
import { CreatedKey, CreateKeyBody, KEY_BODY_LIMIT, KeyList, KeyParams, RevokedKey } from "./model";

export { requireKeyManager } from "./manager";

const shown = (key: ApiKeyInfo) => ({
  id: key.id,
  name: key.name,
  prefix: key.prefix,
  scopes: key.scopes,
  createdAt: key.createdAt,
  lastUsedAt: key.lastUsedAt,
});

/**
 * `GET/POST /v1/keys`, `DELETE /v1/keys/:id`: the caller's own API keys (the CLI's `mnemo keys`,
 * over HTTP); with them, the caller's developer tokens (dev-tokens.ts).
 */
export function keyRoutes(auth: AuthService, credentials: CredentialsService) {
  return createRouter().use(apiKeyRoutes(auth, credentials)).use(devTokenRoutes(auth, credentials));
}

function apiKeyRoutes(auth: AuthService, credentials: CredentialsService) {
  return createRouter({ prefix: "/v1/keys" })
    .use(authPlugin(auth))
    .get(
      "/",
      async ({ principal }) => {
        requireKeyManager(principal);
        return { data: (await credentials.listApiKeys(principal.userId)).filter((key) => !key.revokedAt).map(shown) };
      },
      {
        auth: true,
        response: { 200: KeyList, ...errorResponses() },
        detail: { tags: ["keys"], summary: "List my live API keys (never their secrets)" },
      },
    )
    .post(
      "/",
      async ({ principal, body, set }) => {
        const created = await credentials.createApiKey({
          userId: principal.userId,
          name: body.name,
          scopes: body.scopes ?? [...ALL_SCOPES],
        });
        set.status = 201;
        set.headers["cache-control"] = "no-store";
        return { ...shown(created), key: created.key };
      },
      {
        auth: true,
        // Checked with the credential, before the body is read.
        transform: checkBeforeBody(async ({ request }) =>
          requireKeyManager(await auth.authenticateRequest(request.headers)),
        ),
        body: CreateKeyBody,
        bodyLimit: KEY_BODY_LIMIT,
        response: { 201: CreatedKey, ...errorResponses() },
        detail: { tags: ["keys"], summary: "Create an API key for myself; its secret is in this answer only" },
      },
    )
    .delete(
      "/:id",
      async ({ principal, params }) => {
        requireKeyManager(principal);
        // Another user's key answers as a missing one.
        if (!(await credentials.revokeOwnApiKey(principal.userId, params.id)))
          throw notFound(`key '${params.id}' not found (or already revoked)`);
        return { id: params.id, revoked: true as const };
      },
      {
        auth: true,
        params: KeyParams,
        response: { 200: RevokedKey, ...errorResponses() },
        detail: { tags: ["keys"], summary: "Revoke one of my API keys; it stops working at once" },
      },
    );
}
