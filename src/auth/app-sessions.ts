import { first, run, sql, type Executor, type Store } from "../db/store";
import { randomSecret } from "../lib/ids";
import type { Scope } from "./scopes";
import { hashSecret } from "./secrets";

/** A session ends after this long without a request… */
export const SESSION_IDLE_MS = 12 * 60 * 60_000;
/** …and this long after sign-in, whatever its use. */
export const SESSION_ABSOLUTE_MS = 7 * 24 * 60 * 60_000;
/** A sign-in link works once, within this long of `mnemo open`. */
export const LINK_TTL_MS = 5 * 60_000;
/** Live sessions one user may hold (a browser each); signing in beyond them ends the oldest. */
export const MAX_SESSIONS_PER_USER = 20;
/** last_seen_at is written at most this often per session (it moves the idle expiry only). */
const TOUCH_INTERVAL_MS = 60_000;

/** What made a session: a sign-in link, or a pasted credential of one of the auth kinds. */
export type SessionVia = "link" | "api_key" | "mock" | "dev_token" | "id_token";

export interface AppSession {
  userId: string;
  scopes: Scope[];
  via: SessionVia;
  keyId: string | null;
  devTokenId: string | null;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
}

type SessionRecord = {
  user_id: string; scopes: string; via: SessionVia; key_id: string | null; dev_token_id: string | null;
  created_at: string; last_seen_at: string; expires_at: string; credential_ended: number | null;
};

export type LinkOutcome = { ok: true; userId: string } | { ok: false; reason: "expired" | "used" | "unknown" };

/**
 * The web app's sessions and sign-in links in the store of record. Their secrets (the
 * cookie's value, the link's token) never reach the store: rows are keyed by SHA-256.
 */
export function createAppSessions(store: Store, now: () => number = Date.now) {
  const lastTouched = new Map<string, number>();
  const iso = (ms: number) => new Date(ms).toISOString();

  return {
    /**
     * A new session; returns its secret id (for the cookie) and when it ends at the latest:
     * {@link SESSION_ABSOLUTE_MS} from now, or `notAfter` (its credential's own expiry) if sooner.
     */
    async create(input: {
      userId: string; scopes: Scope[]; via: SessionVia; keyId?: string | null; devTokenId?: string | null; notAfter?: Date;
    }): Promise<{ id: string; expiresAt: string }> {
      const id = randomSecret(43);
      const idHash = hashSecret(id);
      const at = now();
      const expiresAt = iso(Math.min(at + SESSION_ABSOLUTE_MS, input.notAfter?.getTime() ?? Infinity));
      await store.transaction(async (tx) => {
        // Expired sessions of this user authenticate nothing: they go when the user signs in again.
        await run(tx, sql`DELETE FROM app_sessions WHERE user_id = ${input.userId} AND (expires_at <= ${iso(at)} OR last_seen_at <= ${iso(at - SESSION_IDLE_MS)})`);
        await run(
          tx,
          sql`INSERT INTO app_sessions (id_hash, user_id, scopes, via, key_id, dev_token_id, created_at, last_seen_at, expires_at)
              VALUES (${idHash}, ${input.userId}, ${JSON.stringify(input.scopes)}, ${input.via}, ${input.keyId ?? null}, ${input.devTokenId ?? null},
                      ${iso(at)}, ${iso(at)}, ${expiresAt})`,
        );
        // Signing in again and again mints no pile of live sessions: beyond the cap the oldest end.
        // The new one is never among them, whatever the order of equal timestamps.
        await run(
          tx,
          sql`DELETE FROM app_sessions WHERE user_id = ${input.userId} AND id_hash <> ${idHash}
                AND id_hash NOT IN (
                  SELECT id_hash FROM app_sessions WHERE user_id = ${input.userId} AND id_hash <> ${idHash}
                  ORDER BY created_at DESC, id_hash DESC LIMIT ${MAX_SESSIONS_PER_USER - 1}
                )`,
        );
      });
      return { id, expiresAt };
    },

    /**
     * The live session with this secret id; null when unknown, idle too long, past its end,
     * or the credential it was made from (an API key, a developer token) was revoked or is gone.
     */
    async find(id: string): Promise<AppSession | null> {
      const idHash = hashSecret(id);
      const row = await first<SessionRecord>(
        store.db,
        sql`SELECT s.user_id, s.scopes, s.via, s.key_id, s.dev_token_id, s.created_at, s.last_seen_at, s.expires_at,
                   CASE WHEN (s.key_id IS NOT NULL AND (k.id IS NULL OR k.revoked_at IS NOT NULL))
                          OR (s.dev_token_id IS NOT NULL AND (d.id IS NULL OR d.revoked_at IS NOT NULL)) THEN 1 ELSE 0 END AS credential_ended
            FROM app_sessions s LEFT JOIN api_keys k ON k.id = s.key_id LEFT JOIN dev_tokens d ON d.id = s.dev_token_id
            WHERE s.id_hash = ${idHash}`,
      );
      if (!row) return null;
      const at = now();
      if (Date.parse(row.expires_at) <= at || Date.parse(row.last_seen_at) + SESSION_IDLE_MS <= at || Number(row.credential_ended) === 1) return null;
      if ((lastTouched.get(idHash) ?? Date.parse(row.last_seen_at)) + TOUCH_INTERVAL_MS <= at) {
        lastTouched.set(idHash, at);
        await run(store.db, sql`UPDATE app_sessions SET last_seen_at = ${iso(at)} WHERE id_hash = ${idHash}`);
      }
      return {
        userId: row.user_id, scopes: JSON.parse(row.scopes), via: row.via, keyId: row.key_id, devTokenId: row.dev_token_id,
        createdAt: row.created_at, lastSeenAt: row.last_seen_at, expiresAt: row.expires_at,
      };
    },

    /** Ends a session (sign-out); false when there was none. */
    async end(id: string): Promise<boolean> {
      const idHash = hashSecret(id);
      lastTouched.delete(idHash);
      return (await run(store.db, sql`DELETE FROM app_sessions WHERE id_hash = ${idHash}`)) > 0;
    },

    /** A one-time sign-in link's token for `userId`, valid for {@link LINK_TTL_MS}. */
    async createLink(userId: string, tx: Executor = store.db): Promise<{ token: string; expiresAt: string }> {
      const token = randomSecret(43);
      const at = now();
      const expiresAt = iso(at + LINK_TTL_MS);
      await run(tx, sql`DELETE FROM app_sign_in_links WHERE user_id = ${userId} AND (expires_at <= ${iso(at)} OR used_at IS NOT NULL)`);
      await run(tx, sql`INSERT INTO app_sign_in_links (token_hash, user_id, created_at, expires_at) VALUES (${hashSecret(token)}, ${userId}, ${iso(at)}, ${expiresAt})`);
      return { token, expiresAt };
    },

    /**
     * Whom a link signs in, without using it: the app asks before a link replaces the
     * session a browser holds. Refused alike when unknown, used or expired.
     */
    async peekLink(token: string): Promise<LinkOutcome & { expiresAt?: string }> {
      const row = await first<{ user_id: string; used_at: string | null; expires_at: string }>(
        store.db,
        sql`SELECT user_id, used_at, expires_at FROM app_sign_in_links WHERE token_hash = ${hashSecret(token)}`,
      );
      if (!row) return { ok: false, reason: "unknown" };
      if (row.used_at) return { ok: false, reason: "used" };
      if (Date.parse(row.expires_at) <= now()) return { ok: false, reason: "expired" };
      return { ok: true, userId: row.user_id, expiresAt: row.expires_at };
    },

    /**
     * Uses a link: one conditional UPDATE, so of two concurrent uses exactly one wins.
     * A used link's row stays (until its user's next link) so a reuse is told as such.
     */
    async useLink(token: string): Promise<LinkOutcome> {
      const tokenHash = hashSecret(token);
      const at = iso(now());
      const used = await run(store.db, sql`UPDATE app_sign_in_links SET used_at = ${at} WHERE token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > ${at}`);
      const row = await first<{ user_id: string; used_at: string | null; expires_at: string }>(
        store.db,
        sql`SELECT user_id, used_at, expires_at FROM app_sign_in_links WHERE token_hash = ${tokenHash}`,
      );
      if (used > 0 && row) return { ok: true, userId: row.user_id };
      if (!row) return { ok: false, reason: "unknown" };
      return { ok: false, reason: row.used_at ? "used" : "expired" };
    },
  };
}
export type AppSessions = ReturnType<typeof createAppSessions>;
