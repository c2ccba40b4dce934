import type { Database } from "bun:sqlite";
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
}

type ApiKeyRecord = {
  id: string; user_id: string; name: string | null; mode: "live" | "test"; lookup: string; secret_hash: string;
  scopes: string; created_at: string; last_used_at: string | null; revoked_at: string | null;
};
type DevTokenRecord = {
  id: string; user_id: string; lookup: string; secret_hash: string; expires_at: string; created_at: string; revoked_at: string | null;
};

const toApiKey = (r: ApiKeyRecord): ApiKeyRow => ({
  id: r.id, userId: r.user_id, name: r.name, mode: r.mode, lookup: r.lookup, secretHash: r.secret_hash,
  scopes: JSON.parse(r.scopes), createdAt: r.created_at, lastUsedAt: r.last_used_at, revokedAt: r.revoked_at,
});
const toDevToken = (r: DevTokenRecord): DevTokenRow => ({
  id: r.id, userId: r.user_id, lookup: r.lookup, secretHash: r.secret_hash, expiresAt: r.expires_at, createdAt: r.created_at, revokedAt: r.revoked_at,
});

/** API keys and developer tokens in SQLite. Every read goes to the table, so a revocation counts at once. */
export function createCredentialsRepository(db: Database) {
  const findKey = db.query<ApiKeyRecord, [string]>("SELECT * FROM api_keys WHERE lookup = ?");
  const findToken = db.query<DevTokenRecord, [string]>("SELECT * FROM dev_tokens WHERE lookup = ?");
  return {
    insertApiKey(row: Omit<ApiKeyRow, "lastUsedAt" | "revokedAt">): void {
      db.query(
        "INSERT INTO api_keys (id, user_id, name, mode, lookup, secret_hash, scopes, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      ).run(row.id, row.userId, row.name, row.mode, row.lookup, row.secretHash, JSON.stringify(row.scopes), row.createdAt);
    },
    findApiKeyByLookup(lookup: string): ApiKeyRow | null {
      const r = findKey.get(lookup);
      return r ? toApiKey(r) : null;
    },
    listApiKeys(userId?: string): ApiKeyRow[] {
      const rows = userId
        ? db.query<ApiKeyRecord, [string]>("SELECT * FROM api_keys WHERE user_id = ? ORDER BY created_at, id").all(userId)
        : db.query<ApiKeyRecord, []>("SELECT * FROM api_keys ORDER BY created_at, id").all();
      return rows.map(toApiKey);
    },
    /** Marks a key revoked; false when no such key or already revoked. */
    revokeApiKey(id: string, at: string): boolean {
      return db.query("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").run(at, id).changes > 0;
    },
    apiKeyExists: (id: string) => db.query("SELECT 1 FROM api_keys WHERE id = ?").get(id) !== null,
    touchApiKey(id: string, at: string): void {
      db.query("UPDATE api_keys SET last_used_at = ? WHERE id = ?").run(at, id);
    },
    insertDevToken(row: Omit<DevTokenRow, "revokedAt">): void {
      db.query(
        "INSERT INTO dev_tokens (id, user_id, lookup, secret_hash, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)",
      ).run(row.id, row.userId, row.lookup, row.secretHash, row.expiresAt, row.createdAt);
    },
    findDevTokenByLookup(lookup: string): DevTokenRow | null {
      const r = findToken.get(lookup);
      return r ? toDevToken(r) : null;
    },
  };
}
export type CredentialsRepository = ReturnType<typeof createCredentialsRepository>;
