import type { AppSessions, SessionVia } from "../auth/app-sessions";
import { ALL_SCOPES } from "../auth/scopes";
import type { AuthService, Principal } from "../auth/service";
import { AppError, badRequest, unauthorized } from "../shared/app-error";
import type { CreateSessionBody } from "./model";

const LINK_REFUSALS = {
  expired:
    "this sign-in link has expired (a link works for 5 minutes); run `mnemo open --user <id>` again for a new one",
  used: "this sign-in link was already used (each link works once); run `mnemo open --user <id>` again for a new one",
  unknown: "this sign-in link is not known to this server; run `mnemo open --user <id>` for a new one",
} as const;

/** Signing in to the web app (a sign-in link or a pasted credential) and out. */
export function createWebAppSessions(auth: AuthService, sessions: AppSessions) {
  return {
    /** Makes a session; returns its secret id (only ever put in the cookie) and what the page may know. */
    async signIn(body: CreateSessionBody) {
      if ((body.token === undefined) === (body.apiKey === undefined))
        throw badRequest("body: give exactly one of 'token' (a sign-in link's) and 'apiKey'");
      if (body.token !== undefined) {
        const outcome = await sessions.useLink(body.token);
        if (!outcome.ok) throw unauthorized(LINK_REFUSALS[outcome.reason]);
        // A link is made by the server's operator (`mnemo open`), as a developer token is: every scope.
        return start({ userId: outcome.userId, scopes: [...ALL_SCOPES], via: "link" });
      }
      let principal: Principal;
      try {
        principal = await auth.authenticate(`Bearer ${body.apiKey!.trim()}`);
      } catch (error) {
        // The field is named, the secret never echoed.
        if (error instanceof AppError && error.status === 401) throw unauthorized(`apiKey: ${error.message}`);
        throw error;
      }
      // A session ends with the credential it came from: it records which key or developer token that was.
      return start({
        userId: principal.userId,
        scopes: [...principal.scopes],
        via: principal.method as SessionVia,
        keyId: principal.keyId ?? null,
        devTokenId: principal.devTokenId ?? null,
        notAfter: principal.expiresAt,
      });
    },
    /** Whom a sign-in link would sign in, without using it (the link's holder could sign in as that user anyway). */
    async linkUser(token: string): Promise<{ userId: string; expiresAt: string }> {
      const outcome = await sessions.peekLink(token);
      if (!outcome.ok) throw unauthorized(LINK_REFUSALS[outcome.reason]);
      return { userId: outcome.userId, expiresAt: outcome.expiresAt! };
    },
    /** Ends the session with this id; false when it had already ended. */
    signOut: (sessionId: string) => sessions.end(sessionId),
  };

  async function start(input: Parameters<AppSessions["create"]>[0]) {
    const { id, expiresAt } = await sessions.create(input);
    return { sessionId: id, info: { userId: input.userId, scopes: input.scopes as string[], expiresAt } };
  }
}
export type WebAppSessions = ReturnType<typeof createWebAppSessions>;
