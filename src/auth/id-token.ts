import type { JWTVerifyGetKey } from "jose";
import { readFileSync } from "node:fs";
import type { Config } from "../config";

/** What a verified identity-provider ID token tells us. */
export interface IdTokenClaims {
  userId: string;
  email?: string;
  /** The token's `exp`. */
  expiresAt?: Date;
}

/** Verifies identity-provider ID tokens; `null` when none is configured. */
export type IdTokenVerifier = ((token: string) => Promise<IdTokenClaims>) | null;

/** Clock skew allowed between us and the identity provider on `iat` and `nbf`. */
export const ID_TOKEN_CLOCK_SKEW_SECONDS = 60;

/**
 * RS256 ID tokens checked against the provider's JWKS (a URL, fetched and cached by
 * jose, or a file), with issuer `https://securetoken.google.com/<project>`, audience
 * `<project>`, a required `exp` (no skew: an expired token is expired), and `iat` / `nbf`
 * no later than 60 s from now. The user id is the token's `sub`. jose is imported only
 * when an identity provider is configured: a server without one never loads it.
 */
export async function createIdTokenVerifier(idp: Config["idp"]): Promise<IdTokenVerifier> {
  if (!idp.projectId || (!idp.jwksUrl && !idp.jwksFile)) return null;
  const { createLocalJWKSet, createRemoteJWKSet, errors, jwtVerify } = await import("jose");
  const keys: JWTVerifyGetKey = idp.jwksFile
    ? createLocalJWKSet(JSON.parse(readFileSync(idp.jwksFile, "utf8")))
    : createRemoteJWKSet(new URL(idp.jwksUrl!), { cooldownDuration: 30_000, cacheMaxAge: 600_000 });
  const issuer = `https://securetoken.google.com/${idp.projectId}`;
  const audience = idp.projectId;
  return async (token) => {
    // The tolerance covers nbf (and exp, checked again strictly below); jose checks iat only with maxTokenAge.
    const { payload } = await jwtVerify(token, keys, {
      issuer,
      audience,
      algorithms: ["RS256"],
      requiredClaims: ["exp"],
      clockTolerance: ID_TOKEN_CLOCK_SKEW_SECONDS,
    });
    const now = Math.floor(Date.now() / 1000);
    if (payload.exp! <= now)
      throw new errors.JWTExpired('"exp" claim timestamp check failed', payload, "exp", "check_failed");
    if (typeof payload.iat === "number" && payload.iat > now + ID_TOKEN_CLOCK_SKEW_SECONDS) {
      throw new errors.JWTClaimValidationFailed('"iat" claim is in the future', payload, "iat", "check_failed");
    }
    if (typeof payload.sub !== "string" || payload.sub.length === 0)
      throw new errors.JWTClaimValidationFailed('"sub" claim is missing', payload, "sub", "missing");
    return {
      userId: payload.sub,
      email: typeof payload.email === "string" ? payload.email : undefined,
      expiresAt: new Date(payload.exp! * 1000),
    };
  };
}
