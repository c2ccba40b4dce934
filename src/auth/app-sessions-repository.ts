import { first, run, sql, type Executor } from "../db/store";

/** What made a session: a sign-in link, or a pasted credential of one of the auth kinds. */
export type SessionVia = "link" | "api_key" | "mock" | "dev_token" | "id_token";

/** A session's row, with whether the credential it was made from was revoked or is gone. */
export type SessionRecord = {
  user_id: string;
  scopes: string;
  via: SessionVia;
  key_id: string | null;
  dev_token_id: string | null;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  credential_ended: number | null;
};

/** A sign-in link's row. */
export type LinkRecord = { user_id: string; used_at: string | null; expires_at: string };

/** The web app's sessions and sign-in links, keyed by the SHA-256 of their secrets. */
export function createAppSessionRepository() {
  return {
    /** Deletes the user's sessions that ended (past `endedBefore`) or idled (last seen at or before `idleBefore`). */
    async deleteEnded(tx: Executor, userId: string, endedBefore: string, idleBefore: string): Promise<void> {
      await run(
        tx,
        sql`DELETE FROM app_sessions WHERE user_id = ${userId} AND (expires_at <= ${endedBefore} OR last_seen_at <= ${idleBefore})`,
      );
    },
    async insert(
      tx: Executor,
      row: {
        idHash: string;
        userId: string;
        scopes: string;
        via: SessionVia;
        keyId: string | null;
        devTokenId: string | null;
        at: string;
        expiresAt: string;
      },
    ): Promise<void> {
      await run(
        tx,
        sql`INSERT INTO app_sessions (id_hash, user_id, scopes, via, key_id, dev_token_id, created_at, last_seen_at, expires_at)
            VALUES (${row.idHash}, ${row.userId}, ${row.scopes}, ${row.via}, ${row.keyId}, ${row.devTokenId},
                    ${row.at}, ${row.at}, ${row.expiresAt})`,
      );
    },
    /** Deletes the user's sessions beyond the `keep` newest, never `except` (equal timestamps ordered by id). */
    async deleteBeyond(tx: Executor, userId: string, except: string, keep: number): Promise<void> {
      await run(
        tx,
        sql`DELETE FROM app_sessions WHERE user_id = ${userId} AND id_hash <> ${except}
              AND id_hash NOT IN (
                SELECT id_hash FROM app_sessions WHERE user_id = ${userId} AND id_hash <> ${except}
                ORDER BY created_at DESC, id_hash DESC LIMIT ${keep}
              )`,
      );
    },
    /** The session with this hash; its credential (an API key or developer token, auth's own tables) is looked at in the same read. */
    async find(tx: Executor, idHash: string): Promise<SessionRecord | null> {
      return first<SessionRecord>(
        tx,
        sql`SELECT s.user_id, s.scopes, s.via, s.key_id, s.dev_token_id, s.created_at, s.last_seen_at, s.expires_at,
                   CASE WHEN (s.key_id IS NOT NULL AND (k.id IS NULL OR k.revoked_at IS NOT NULL))
                          OR (s.dev_token_id IS NOT NULL AND (d.id IS NULL OR d.revoked_at IS NOT NULL)) THEN 1 ELSE 0 END AS credential_ended
            FROM app_sessions s LEFT JOIN api_keys k ON k.id = s.key_id LEFT JOIN dev_tokens d ON d.id = s.dev_token_id
            WHERE s.id_hash = ${idHash}`,
      );
    },
    async touch(tx: Executor, idHash: string, at: string): Promise<void> {
      await run(tx, sql`UPDATE app_sessions SET last_seen_at = ${at} WHERE id_hash = ${idHash}`);
    },
    /** Deletes a session; false when there was none. */
    async delete(tx: Executor, idHash: string): Promise<boolean> {
      return (await run(tx, sql`DELETE FROM app_sessions WHERE id_hash = ${idHash}`)) > 0;
    },
    /** Deletes the user's links that expired (by `at`) or were used. */
    async deleteSpentLinks(tx: Executor, userId: string, at: string): Promise<void> {
      await run(
        tx,
        sql`DELETE FROM app_sign_in_links WHERE user_id = ${userId} AND (expires_at <= ${at} OR used_at IS NOT NULL)`,
      );
    },
    async insertLink(
      tx: Executor,
      link: { tokenHash: string; userId: string; at: string; expiresAt: string },
    ): Promise<void> {
      await run(
        tx,
        sql`INSERT INTO app_sign_in_links (token_hash, user_id, created_at, expires_at) VALUES (${link.tokenHash}, ${link.userId}, ${link.at}, ${link.expiresAt})`,
      );
    },
    async findLink(tx: Executor, tokenHash: string): Promise<LinkRecord | null> {
      return first<LinkRecord>(
        tx,
        sql`SELECT user_id, used_at, expires_at FROM app_sign_in_links WHERE token_hash = ${tokenHash}`,
      );
    },
    /** Marks a live, unused link used: one conditional UPDATE, so of two concurrent uses one wins (true). */
    async useLink(tx: Executor, tokenHash: string, at: string): Promise<boolean> {
      return (
        (await run(
          tx,
          sql`UPDATE app_sign_in_links SET used_at = ${at} WHERE token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > ${at}`,
        )) > 0
      );
    },
  };
}
