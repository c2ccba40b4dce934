import { all, first, run, sql, type Executor } from "../db/store";
import type { Scope } from "./scopes";

/** A stored API key, without its secret (only the hash is ever stored). */
export interface ApiKeyRow {
  id: string;
  userId: string;
  name: string | null;
  mode: "live" | "test";
  lookup: string;
  secretHash: string;
  scopes: Scope[];
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface DevTokenRow {
  id: string;
  userId: string;
  lookup: string;
  secretHash: string;
  expiresAt: string;
  createdAt: string;
  revokedAt: string | null;
  /** 'sync': issued by the identity sync webhook; null: `mnemo dev-token create`. */
  issuedBy: "sync" | null;
}

type ApiKeyRecord = {
  id: string;
  user_id: string;
  name: string | null;
  mode: "live" | "test";
  lookup: string;
  secret_hash: string;
  scopes: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
};
type DevTokenRecord = {
  id: string;
  user_id: string;
  lookup: string;
  secret_hash: string;
  expires_at: string;
  created_at: string;
  revoked_at: string | null;
  issued_by: "sync" | null;
};

const toApiKey = (r: ApiKeyRecord): ApiKeyRow => ({
  id: r.id,
  userId: r.user_id,
  name: r.name,
  mode: r.mode,
  lookup: r.lookup,
  secretHash: r.secret_hash,
  scopes: JSON.parse(r.scopes),
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
});
const toDevToken = (r: DevTokenRecord): DevTokenRow => ({
  id: r.id,
  userId: r.user_id,
  lookup: r.lookup,
  secretHash: r.secret_hash,
  expiresAt: r.expires_at,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
  issuedBy: r.issued_by ?? null,
});

/** API keys and developer tokens in the store of record. Every read goes to the table, so a revocation counts at once. */
export function createCredentialsRepository() {
  return {
    async insertApiKey(tx: Executor, row: Omit<ApiKeyRow, "lastUsedAt" | "revokedAt">): Promise<void> {
      await run(
        tx,
        sql`INSERT INTO api_keys (id, user_id, name, mode, lookup, secret_hash, scopes, created_at)
            VALUES (${row.id}, ${row.userId}, ${row.name}, ${row.mode}, ${row.lookup}, ${row.secretHash}, ${JSON.stringify(row.scopes)}, ${row.createdAt})`,
      );
    },
    async findApiKeyByLookup(tx: Executor, lookup: string): Promise<ApiKeyRow | null> {
      const r = await first<ApiKeyRecord>(tx, sql`SELECT * FROM api_keys WHERE lookup = ${lookup}`);
      return r ? toApiKey(r) : null;
    },
    async listApiKeys(tx: Executor, userId?: string): Promise<ApiKeyRow[]> {
      const rows = userId
        ? await all<ApiKeyRecord>(tx, sql`SELECT * FROM api_keys WHERE user_id = ${userId} ORDER BY created_at, id`)
        : await all<ApiKeyRecord>(tx, sql`SELECT * FROM api_keys ORDER BY created_at, id`);
      return rows.map(toApiKey);
    },
    /** Marks a key revoked; false when no such key or already revoked. */
    async revokeApiKey(tx: Executor, id: string, at: string): Promise<boolean> {
      return (await run(tx, sql`UPDATE api_keys SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`)) > 0;
    },
    /** Revokes one of `userId`'s live keys; false when the user has no such live key. */
    async revokeOwnApiKey(tx: Executor, userId: string, id: string, at: string): Promise<boolean> {
      return (
        (await run(
          tx,
          sql`UPDATE api_keys SET revoked_at = ${at} WHERE id = ${id} AND user_id = ${userId} AND revoked_at IS NULL`,
        )) > 0
      );
    },
    async apiKeyExists(tx: Executor, id: string): Promise<boolean> {
      return (await first(tx, sql`SELECT 1 AS one FROM api_keys WHERE id = ${id}`)) !== null;
    },
    async touchApiKey(tx: Executor, id: string, at: string): Promise<void> {
      await run(tx, sql`UPDATE api_keys SET last_used_at = ${at} WHERE id = ${id}`);
    },
    async insertDevToken(
      tx: Executor,
      row: Omit<DevTokenRow, "revokedAt" | "issuedBy">,
      issuedBy: "sync" | null = null,
    ): Promise<void> {
      await run(
        tx,
        sql`INSERT INTO dev_tokens (id, user_id, lookup, secret_hash, expires_at, created_at, issued_by)
            VALUES (${row.id}, ${row.userId}, ${row.lookup}, ${row.secretHash}, ${row.expiresAt}, ${row.createdAt}, ${issuedBy})`,
      );
    },
    /**
     * Revokes a user's live tokens of one issuer but `newest` and the `keepOthers` newest
     * besides it, by deleting them: a revoked token authenticates nothing, and kept rows
     * would pile up for a user who syncs again and again. Returns how many.
     */
    async deleteDevTokensBeyond(
      tx: Executor,
      userId: string,
      issuedBy: "sync",
      newest: string,
      keepOthers: number,
      at: string,
    ): Promise<number> {
      return run(
        tx,
        sql`DELETE FROM dev_tokens
            WHERE user_id = ${userId} AND issued_by = ${issuedBy} AND id <> ${newest}
              AND id NOT IN (
                SELECT id FROM dev_tokens
                WHERE user_id = ${userId} AND issued_by = ${issuedBy} AND revoked_at IS NULL AND expires_at > ${at} AND id <> ${newest}
                ORDER BY created_at DESC, id DESC LIMIT ${keepOthers}
              )`,
      );
    },
    async listDevTokens(tx: Executor, userId?: string): Promise<DevTokenRow[]> {
      const rows = userId
        ? await all<DevTokenRecord>(tx, sql`SELECT * FROM dev_tokens WHERE user_id = ${userId} ORDER BY created_at, id`)
        : await all<DevTokenRecord>(tx, sql`SELECT * FROM dev_tokens ORDER BY created_at, id`);
      return rows.map(toDevToken);
    },
    /** Marks a token revoked; with `userId`, only that user's. False when no such live token. */
    async revokeDevToken(tx: Executor, id: string, at: string, userId?: string): Promise<boolean> {
      const owner = userId === undefined ? sql`` : sql`AND user_id = ${userId}`;
      return (
        (await run(
          tx,
          sql`UPDATE dev_tokens SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL ${owner}`,
        )) > 0
      );
    },
    async devTokenExists(tx: Executor, id: string): Promise<boolean> {
      return (await first(tx, sql`SELECT 1 AS one FROM dev_tokens WHERE id = ${id}`)) !== null;
    },
    async findDevTokenByLookup(tx: Executor, lookup: string): Promise<DevTokenRow | null> {
      const r = await first<DevTokenRecord>(tx, sql`SELECT * FROM dev_tokens WHERE lookup = ${lookup}`);
      return r ? toDevToken(r) : null;
    },
  };
}
export type CredentialsRepository = ReturnType<typeof createCredentialsRepository>;
