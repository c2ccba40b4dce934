import { exportJWK, generateKeyPair, SignJWT, type JWK } from "jose";

/**
 * A fake identity provider: an RSA key pair and a JWKS served over real HTTP, and a
 * signer for ID tokens shaped like the provider's (iss securetoken…/<project>, aud).
 */
export async function startFakeIdp(projectId = "mnemo-test") {
  const { publicKey, privateKey } = await generateKeyPair("RS256");
  const stranger = await generateKeyPair("RS256");
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: "key-1", alg: "RS256", use: "sig" };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () => Response.json({ keys: [jwk] }),
  });
  return {
    projectId,
    jwksUrl: `http://127.0.0.1:${server.port}/jwks.json`,
    jwks: { keys: [jwk] },
    /**
     * Signs an ID token; override claims, leave `exp` out (`expiresInSec: null`), move `iat`
     * or set `nbf` relative to now, or sign with a key the JWKS does not hold.
     */
    async sign(
      options: {
        sub?: string;
        iss?: string;
        aud?: string;
        expiresInSec?: number | null;
        issuedAtSec?: number;
        notBeforeSec?: number;
        wrongKey?: boolean;
      } = {},
    ) {
      const now = Math.floor(Date.now() / 1000);
      const jwt = new SignJWT({ email: "user@example.com" })
        .setProtectedHeader({ alg: "RS256", kid: "key-1" })
        .setSubject(options.sub ?? "idp-user-1")
        .setIssuer(options.iss ?? `https://securetoken.google.com/${projectId}`)
        .setAudience(options.aud ?? projectId)
        .setIssuedAt(now + (options.issuedAtSec ?? -10));
      if (options.expiresInSec !== null) jwt.setExpirationTime(now + (options.expiresInSec ?? 3600));
      if (options.notBeforeSec !== undefined) jwt.setNotBefore(now + options.notBeforeSec);
      return jwt.sign(options.wrongKey ? stranger.privateKey : privateKey);
    },
    stop: () => server.stop(true),
  };
}
