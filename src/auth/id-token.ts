import { createLocalJWKSet, createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from "jose";
import { readFileSync } from "node:fs";
import type { Config } from "../config";

/** What a verified identity-provider ID token tells us. */
export interface IdTokenClaims {
  userId: string;
  email?: string;
}

/** Verifies identity-provider ID tokens; `null` when none is configured. */
export type IdTokenVerifier = ((token: string) => Promise<IdTokenClaims>) | null;

/**
 * RS256 ID tokens checked against the provider's JWKS (a URL, fetched and cached by
 * jose, or a file), with issuer `https://securetoken.google.com/<project>`, audience
 * `<project>` and expiry enforced. The user id is the token's `sub`.
 */
export function createIdTokenVerifier(idp: Config["idp"]): IdTokenVerifier {
  if (!idp.projectId || (!idp.jwksUrl && !idp.jwksFile)) return null;
  const keys: JWTVerifyGetKey = idp.jwksFile
    ? createLocalJWKSet(JSON.parse(readFileSync(idp.jwksFile, "utf8")))
    : createRemoteJWKSet(new URL(idp.jwksUrl!), { cooldownDuration: 30_000, cacheMaxAge: 600_000 });
  const issuer = `https://securetoken.google.com/${idp.projectId}`;
  const audience = idp.projectId;
  return async (token) => {
    const { payload } = await jwtVerify(token, keys, { issuer, audience, algorithms: ["RS256"] });
    if (typeof payload.sub !== "string" || payload.sub.length === 0) throw new Error("token has no subject");
    return { userId: payload.sub, email: typeof payload.email === "string" ? payload.email : undefined };
  };
}
