import type { Executor, Store } from "../db/store";
import { randomSecret } from "../lib/ids";
import { createAppSessionRepository, type SessionVia } from "./app-sessions-repository";
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

export type { SessionVia } from "./app-sessions-repository";

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

export type LinkOutcome = { ok: true; userId: string } | { ok: false; reason: "expired" | "used" | "unknown" };

/**
 * The web app's sessions and sign-in links in the store of record. Their secrets (the
 * cookie's value, the link's token) never reach the store: rows are keyed by SHA-256.
 */
export function createAppSessions(store: Store, now: () => number = Date.now) {
  const repo = createAppSessionRepository();
  const lastTouched = new Map<string, number>();
  const iso = (ms: number) => new Date(ms).toISOString();

  return {
    /**
     * A new session; returns its secret id (for the cookie) and when it ends at the latest:
     * {@link SESSION_ABSOLUTE_MS} from now, or `notAfter` (its credential's own expiry) if sooner.
     */
    async create(input: {
      userId: string;
      scopes: Scope[];
      via: SessionVia;
      keyId?: string | null;
      devTokenId?: string | null;
      notAfter?: Date;
    }): Promise<{ id: string; expiresAt: string }> {
      const id = randomSecret(43);
      const idHash = hashSecret(id);
      const at = now();
      const expiresAt = iso(Math.min(at + SESSION_ABSOLUTE_MS, input.notAfter?.getTime() ?? Infinity));
      await store.transaction(async (tx) => {
        // Expired sessions of this user authenticate nothing: they go when the user signs in again.
        await repo.deleteEnded(tx, input.userId, iso(at), iso(at - SESSION_IDLE_MS));
        await repo.insert(tx, {
          idHash,
          userId: input.userId,
          scopes: JSON.stringify(input.scopes),
          via: input.via,
          keyId: input.keyId ?? null,
          devTokenId: input.devTokenId ?? null,
          at: iso(at),
          expiresAt,
        });
        // Signing in again and again mints no pile of live sessions: beyond the cap the oldest end.
        // The new one is never among them, whatever the order of equal timestamps.
        await repo.deleteBeyond(tx, input.userId, idHash, MAX_SESSIONS_PER_USER - 1);
      });
      return { id, expiresAt };
    },

    /**
     * The live session with this secret id; null when unknown, idle too long, past its end,
     * or the credential it was made from (an API key, a developer token) was revoked or is gone.
     */
    async find(id: string): Promise<AppSession | null> {
      const idHash = hashSecret(id);
      const row = await repo.find(store.db, idHash);
      if (!row) return null;
      const at = now();
      if (
        Date.parse(row.expires_at) <= at ||
        Date.parse(row.last_seen_at) + SESSION_IDLE_MS <= at ||
        Number(row.credential_ended) === 1
      )
        return null;
      if ((lastTouched.get(idHash) ?? Date.parse(row.last_seen_at)) + TOUCH_INTERVAL_MS <= at) {
        lastTouched.set(idHash, at);
        await repo.touch(store.db, idHash, iso(at));
      }
      return {
        userId: row.user_id,
        scopes: JSON.parse(row.scopes),
        via: row.via,
        keyId: row.key_id,
        devTokenId: row.dev_token_id,
        createdAt: row.created_at,
        lastSeenAt: row.last_seen_at,
        expiresAt: row.expires_at,
      };
    },

    /** Ends a session (sign-out); false when there was none. */
    async end(id: string): Promise<boolean> {
      const idHash = hashSecret(id);
      lastTouched.delete(idHash);
      return repo.delete(store.db, idHash);
    },

    /** A one-time sign-in link's token for `userId`, valid for {@link LINK_TTL_MS}. */
    async createLink(userId: string, tx: Executor = store.db): Promise<{ token: string; expiresAt: string }> {
      const token = randomSecret(43);
      const at = now();
      const expiresAt = iso(at + LINK_TTL_MS);
      await repo.deleteSpentLinks(tx, userId, iso(at));
      await repo.insertLink(tx, { tokenHash: hashSecret(token), userId, at: iso(at), expiresAt });
      return { token, expiresAt };
    },

    /**
     * Whom a link signs in, without using it: the app asks before a link replaces the
     * session a browser holds. Refused alike when unknown, used or expired.
     */
    async peekLink(token: string): Promise<LinkOutcome & { expiresAt?: string }> {
      const row = await repo.findLink(store.db, hashSecret(token));
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
      const used = await repo.useLink(store.db, tokenHash, at);
      const row = await repo.findLink(store.db, tokenHash);
      if (used && row) return { ok: true, userId: row.user_id };
      if (!row) return { ok: false, reason: "unknown" };
      return { ok: false, reason: row.used_at ? "used" : "expired" };
    },
  };
}
export type AppSessions = ReturnType<typeof createAppSessions>;
