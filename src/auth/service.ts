import type { Store } from "../db/store";
import type { Logger } from "../lib/log";
import { AppError, forbidden, unauthorized } from "../shared/app-error";
import type { AppSessions, SessionVia } from "./app-sessions";
import type { CredentialsRepository } from "./credentials-repository";
import type { IdTokenVerifier } from "./id-token";
import { ALL_SCOPES, OPERATOR_SCOPE, type Scope } from "./scopes";
import { LOOKUP_LENGTH, secretMatches } from "./secrets";

/** Who is calling, resolved from the bearer token. */
export interface Principal {
  userId: string;
  method: "mock" | "api_key" | "dev_token" | "id_token" | "app_session";
  scopes: ReadonlySet<Scope>;
  /** The API key's id, for per-key limits. */
  keyId?: string;
  /** The developer token's id: a web app session made from it ends when it is revoked. */
  devTokenId?: string;
  /** For a web app session: what it was made from (a sign-in link or a pasted credential's kind). */
  via?: SessionVia;
  /** When the credential stops working by itself (developer and ID tokens): a session made from it ends then too. */
  expiresAt?: Date;
  verifiedAt: Date;
}

export const PREFIX = {
  mockToken: "mock-token-",
  mockKey: "svc_sk_mock_",
  mockDevToken: "svc_dev_mock_",
  liveKey: "svc_sk_live_",
  testKey: "svc_sk_test_",
  devToken: "svc_dev_",
} as const;

const ALL = new Set<Scope>(ALL_SCOPES);
/**
 * A mock token is the operator's too: on a server accepting them anyone can act as any
 * user, so the server's own details (`/health`) protect nothing more there.
 */
const MOCK = new Set<Scope>([...ALL_SCOPES, OPERATOR_SCOPE]);
const TOUCH_INTERVAL_MS = 60_000;

export interface AuthServiceOptions {
  credentials: CredentialsRepository;
  store: Store;
  verifyIdToken: IdTokenVerifier;
  allowMockTokens: boolean;
  log: Logger;
  /** The web app's cookie sessions; without them a session cookie is ignored. */
  appSessions?: AppSessions;
}

/** The web app's session cookie (HttpOnly, SameSite=Strict; see src/web-app). */
export const SESSION_COOKIE = "mnemo_session";
/** The header every cookie-authenticated request must carry: a cross-site form cannot send it. */
export const APP_HEADER = "x-mnemo-app";
/**
 * The user a tab of the app believes it is signed in as (URI-encoded). The cookie is the
 * browser's, shared by its tabs: after another sign-in in another tab, an older tab's
 * requests are refused (401) instead of acting as the new user.
 */
export const APP_USER_HEADER = "x-mnemo-user";

/** Resolves bearer tokens in the documented order (docs/api.md#authentication) and checks scopes. */
export function createAuthService({
  credentials,
  store,
  verifyIdToken,
  allowMockTokens,
  log,
  appSessions,
}: AuthServiceOptions) {
  const lastTouched = new Map<string, number>();

  function mockPrincipal(userId: string, kind = "mock tokens"): Principal {
    if (!allowMockTokens) throw unauthorized(`${kind} are disabled on this server (start it with --allow-mock-tokens)`);
    if (!userId) throw unauthorized("mock token has an empty user id");
    return { userId, method: "mock", scopes: MOCK, verifiedAt: new Date() };
  }

  async function apiKeyPrincipal(token: string, prefixLength: number): Promise<Principal> {
    const body = token.slice(prefixLength);
    const key = await credentials.findApiKeyByLookup(store.db, body.slice(0, LOOKUP_LENGTH));
    if (!key || !secretMatches(token, key.secretHash)) throw unauthorized("invalid API key");
    if (key.revokedAt) throw unauthorized("API key has been revoked");
    const now = Date.now();
    // last_used_at is informative; writing it on every request would cost a commit each.
    if ((lastTouched.get(key.id) ?? 0) + TOUCH_INTERVAL_MS < now) {
      lastTouched.set(key.id, now);
      // Not awaited: the request does not wait for it, and a failed write is only a stale timestamp.
      credentials.touchApiKey(store.db, key.id, new Date(now).toISOString()).catch((error) => {
        log.debug("last_used_at not recorded", { keyId: key.id, reason: (error as Error).message });
      });
    }
    return {
      userId: key.userId,
      method: "api_key",
      scopes: new Set(key.scopes),
      keyId: key.id,
      verifiedAt: new Date(now),
    };
  }

  async function devTokenPrincipal(token: string): Promise<Principal> {
    const body = token.slice(PREFIX.devToken.length);
    const row = await credentials.findDevTokenByLookup(store.db, body.slice(0, LOOKUP_LENGTH));
    if (!row || !secretMatches(token, row.secretHash))
      throw unauthorized("invalid developer token (unknown, or revoked)");
    if (row.revokedAt) throw unauthorized("developer token has been revoked");
    if (Date.parse(row.expiresAt) <= Date.now()) throw unauthorized("developer token has expired");
    return {
      userId: row.userId,
      method: "dev_token",
      scopes: ALL,
      devTokenId: row.id,
      verifiedAt: new Date(),
      expiresAt: new Date(row.expiresAt),
    };
  }

  async function idTokenPrincipal(token: string): Promise<Principal> {
    if (!verifyIdToken)
      throw unauthorized("invalid token (identity-provider tokens are not configured on this server)");
    try {
      const claims = await verifyIdToken(token);
      return {
        userId: claims.userId,
        method: "id_token",
        scopes: ALL,
        verifiedAt: new Date(),
        expiresAt: claims.expiresAt,
      };
    } catch (error) {
      log.debug("id token rejected", { reason: (error as Error).message });
      throw unauthorized(`invalid token: ${describeJwtFailure(error)}`);
    }
  }

  /**
   * The web app's session: only with `X-Mnemo-App: 1`, which a page elsewhere cannot add
   * (a cross-origin request with it needs a preflight, and the CORS policy does not allow
   * it), and never from a request the browser marks cross-site. A session made from a mock
   * token ends when the server stops accepting mock tokens.
   */
  async function sessionPrincipal(sessionId: string, headers: Headers): Promise<Principal> {
    if (headers.get(APP_HEADER) !== "1")
      throw forbidden("a session cookie is accepted only with the header 'X-Mnemo-App: 1' (sent by the app itself)");
    const site = headers.get("sec-fetch-site");
    if (site && site !== "same-origin" && site !== "none")
      throw forbidden(`a session cookie is not accepted from a ${site} request`);
    const session = await appSessions!.find(sessionId);
    if (!session)
      throw unauthorized(
        "the app session has ended (signed out, expired, or the key or token it was made from revoked); sign in again",
      );
    if (session.via === "mock" && !allowMockTokens)
      throw unauthorized("this session was made from a mock token, which this server no longer accepts; sign in again");
    const expected = headers.get(APP_USER_HEADER);
    if (expected !== null && expected !== encodeURIComponent(session.userId)) {
      throw unauthorized("this browser signed in again as another user since this page was opened; sign in again");
    }
    return {
      userId: session.userId,
      method: "app_session",
      scopes: new Set(session.scopes),
      keyId: session.keyId ?? undefined,
      via: session.via,
      verifiedAt: new Date(),
    };
  }

  const service = {
    /**
     * A request's caller: `Authorization: Bearer …` when present, else the web app's
     * session cookie (see sessionPrincipal); throws 401/403 AppError.
     */
    async authenticateRequest(headers: Headers): Promise<Principal> {
      const authorization = headers.get("authorization");
      if (authorization === null && appSessions) {
        const sessionId = sessionCookie(headers);
        if (sessionId) return sessionPrincipal(sessionId, headers);
      }
      return service.authenticate(authorization);
    },
    /** Resolves `Authorization: Bearer …`; throws 401 AppError when missing or invalid. */
    async authenticate(authorization: string | undefined | null): Promise<Principal> {
      const token = parseBearer(authorization);
      if (token.startsWith(PREFIX.mockToken)) return mockPrincipal(token.slice(PREFIX.mockToken.length));
      if (token.startsWith(PREFIX.mockKey))
        return mockPrincipal(token.slice(PREFIX.mockKey.length), "mock keys (svc_sk_mock_…)");
      if (token.startsWith(PREFIX.mockDevToken))
        return mockPrincipal(token.slice(PREFIX.mockDevToken.length), "mock developer tokens (svc_dev_mock_…)");
      if (token.startsWith(PREFIX.liveKey)) return apiKeyPrincipal(token, PREFIX.liveKey.length);
      if (token.startsWith(PREFIX.testKey)) return apiKeyPrincipal(token, PREFIX.testKey.length);
      if (token.startsWith(PREFIX.devToken)) return devTokenPrincipal(token);
      return idTokenPrincipal(token);
    },
    /** Only identity-provider ID tokens, for the sign-in webhooks. */
    async authenticateIdToken(authorization: string | undefined | null): Promise<Principal> {
      return idTokenPrincipal(parseBearer(authorization));
    },
    requireScope(principal: Principal, scope: Scope): void {
      if (!principal.scopes.has(scope)) throw forbidden(`this credential lacks the '${scope}' scope`);
    },
  };
  return service;
}
export type AuthService = ReturnType<typeof createAuthService>;

/** The session cookie's value, if the request carries one. */
export function sessionCookie(headers: Headers): string | null {
  const cookie = headers.get("cookie");
  if (!cookie) return null;
  for (const part of cookie.split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === SESSION_COOKIE) return part.slice(at + 1).trim() || null;
  }
  return null;
}

function parseBearer(authorization: string | undefined | null): string {
  if (!authorization) throw unauthorized("missing Authorization header (expected 'Bearer <token>')");
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) throw unauthorized("malformed Authorization header (expected 'Bearer <token>')");
  return match[1];
}

function describeJwtFailure(error: unknown): string {
  const code = (error as { code?: string }).code;
  switch (code) {
    case "ERR_JWT_EXPIRED":
      return "token has expired";
    case "ERR_JWT_CLAIM_VALIDATION_FAILED": {
      const { claim = "claim", reason } = error as { claim?: string; reason?: string };
      if (reason === "missing") return `claim check failed (${claim}: missing)`;
      if (claim === "iat" || claim === "nbf") return `claim check failed (${claim}: in the future)`;
      return `claim check failed (${claim})`;
    }
    case "ERR_JWS_SIGNATURE_VERIFICATION_FAILED":
      return "signature verification failed";
    case "ERR_JWKS_NO_MATCHING_KEY":
      return "no matching signing key";
    case "ERR_JWS_INVALID":
    case "ERR_JWT_INVALID":
      return "not a valid JWT";
    default:
      return error instanceof AppError ? error.message : "verification failed";
  }
}
