import { authPlugin } from "../auth/plugin";
import { APP_HEADER, SESSION_COOKIE, sessionCookie, type AuthService } from "../auth/service";
import { SESSION_ABSOLUTE_MS } from "../auth/app-sessions";
import { checkBeforeBody } from "../lib/header-checks";
import { createRouter } from "../lib/router";
import { badRequest, forbidden } from "../shared/app-error";
import { errorsFor } from "../shared/error-body";
import { CreateSessionBody, LinkBody, LinkInfo, SESSION_BODY_LIMIT, SessionEnded, SessionInfo } from "./model";
import type { WebAppSessions } from "./sessions";

export { appPages } from "./static";
export { APP_CSP, loadAppAssets } from "./assets";
export { createWebAppSessions, type WebAppSessions } from "./sessions";

/** The cookie's attributes: never readable by the page's script, never sent by another site, for the whole origin (the API is under /v1). */
function cookie(request: Request, value: string, maxAgeSeconds: number): string {
  const https = new URL(request.url).protocol === "https:" || request.headers.get("x-forwarded-proto") === "https";
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${https ? "; Secure" : ""}`;
}

/**
 * `POST /v1/app/link` (whom a sign-in link is for, without using it),
 * `POST /v1/app/session` (sign in: a sign-in link's token or a pasted credential for an
 * HttpOnly, SameSite=Strict cookie) and `DELETE /v1/app/session` (sign out: the session
 * ends on the server). All need `X-Mnemo-App: 1`: a form on another site can send none.
 */
export function webAppRoutes(auth: AuthService, sessions: WebAppSessions) {
  return createRouter({ prefix: "/v1/app" })
    .use(authPlugin(auth))
    .post(
      "/session",
      async ({ request, body, set }) => {
        const { sessionId, info } = await sessions.signIn(body);
        // A session this browser held before is replaced: it ends on the server, not just in the cookie jar.
        const previous = sessionCookie(request.headers);
        if (previous) await sessions.signOut(previous);
        // The cookie lives as long as the session can (a developer token's session ends with the token).
        const maxAge = Math.max(0, Math.min(SESSION_ABSOLUTE_MS, Date.parse(info.expiresAt) - Date.now()));
        set.headers["set-cookie"] = cookie(request, sessionId, Math.round(maxAge / 1000));
        set.headers["cache-control"] = "no-store";
        return info;
      },
      {
        // Signing a browser in to someone's account is an attack too (login CSRF): the header first, before the body.
        transform: checkBeforeBody(async ({ request }) => {
          if (request.headers.get(APP_HEADER) !== "1")
            throw forbidden("signing in to the app needs the header 'X-Mnemo-App: 1' (sent by the app itself)");
        }),
        body: CreateSessionBody,
        bodyLimit: SESSION_BODY_LIMIT,
        response: { 200: SessionInfo, ...errorsFor(400, 401, 403, 413, 415, 500, 503) },
        detail: {
          tags: ["app"],
          summary:
            "Sign in to the web app: a one-time sign-in link's token or a pasted API key, for an HttpOnly session cookie",
          security: [{}],
        },
      },
    )
    .post(
      "/link",
      async ({ body, set }) => {
        set.headers["cache-control"] = "no-store";
        return sessions.linkUser(body.token);
      },
      {
        // As for signing in: only the app asks, so no other page learns whom a link is for.
        transform: checkBeforeBody(async ({ request }) => {
          if (request.headers.get(APP_HEADER) !== "1")
            throw forbidden("reading a sign-in link needs the header 'X-Mnemo-App: 1' (sent by the app itself)");
        }),
        body: LinkBody,
        bodyLimit: SESSION_BODY_LIMIT,
        response: { 200: LinkInfo, ...errorsFor(400, 401, 403, 413, 415, 500, 503) },
        detail: {
          tags: ["app"],
          summary:
            "Whom a sign-in link signs in, without using it: the app asks before a link replaces the session of another user",
          security: [{}],
        },
      },
    )
    .delete(
      "/session",
      async ({ request, principal, set }) => {
        const sessionId = sessionCookie(request.headers);
        if (principal.method !== "app_session" || !sessionId)
          throw badRequest(
            "session: this request carries no app session to end (it authenticated with a bearer token)",
          );
        await sessions.signOut(sessionId);
        set.headers["set-cookie"] = cookie(request, "", 0);
        return { signedOut: true as const };
      },
      {
        auth: true,
        response: { 200: SessionEnded, ...errorsFor(400, 401, 403, 500, 503) },
        detail: {
          tags: ["app"],
          summary: "Sign out of the web app: the session ends on the server and its cookie is cleared",
        },
      },
    );
}
