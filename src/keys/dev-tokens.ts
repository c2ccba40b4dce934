import { authPlugin } from "../auth/plugin";
import type { CredentialsService, DevTokenInfo } from "../auth/credentials-service";
import type { AuthService } from "../auth/service";
import { createRouter } from "../lib/router";
import { notFound } from "../shared/app-error";
import { errorResponses } from "../shared/error-body";
import { DevTokenList, KeyParams, RevokedDevToken } from "./model";
import { requireKeyManager } from "./manager";

const shown = (token: DevTokenInfo) => ({
  id: token.id,
  prefix: token.prefix,
  issuedBy: token.issuedBy,
  createdAt: token.createdAt,
  expiresAt: token.expiresAt,
});

/**
 * `GET /v1/dev-tokens`, `DELETE /v1/dev-tokens/:id`: the caller's own live developer tokens
 * (a device's sign-in through the identity sync, or `mnemo dev-token create`), so that a
 * lost device's token can be revoked by its owner; web app sessions made from it end too.
 * Managed by a person, like API keys: an API key, or a session made from one, cannot.
 */
export function devTokenRoutes(auth: AuthService, credentials: CredentialsService) {
  return createRouter({ prefix: "/v1/dev-tokens" })
    .use(authPlugin(auth))
    .get(
      "/",
      async ({ principal }) => {
        requireKeyManager(principal);
        const now = Date.now();
        const live = (await credentials.listDevTokens(principal.userId)).filter(
          (token) => !token.revokedAt && Date.parse(token.expiresAt) > now,
        );
        return { data: live.map(shown) };
      },
      {
        auth: true,
        response: { 200: DevTokenList, ...errorResponses() },
        detail: { tags: ["keys"], summary: "List my live developer tokens (never their secrets)" },
      },
    )
    .delete(
      "/:id",
      async ({ principal, params }) => {
        requireKeyManager(principal);
        // Another user's token answers as a missing one.
        if ((await credentials.revokeDevToken(params.id, principal.userId)) !== "revoked")
          throw notFound(`developer token '${params.id}' not found (or already revoked)`);
        return { id: params.id, revoked: true as const };
      },
      {
        auth: true,
        params: KeyParams,
        response: { 200: RevokedDevToken, ...errorResponses() },
        detail: {
          tags: ["keys"],
          summary: "Revoke one of my developer tokens; it, and app sessions made from it, stop working at once",
        },
      },
    );
}
