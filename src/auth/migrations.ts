import type { Migration } from "../db/migrate";

/**
 * The web app's sign-in (src/web-app): cookie sessions and one-time sign-in links. Only
 * SHA-256 hashes of their secrets are stored, as for API keys; a session carries the
 * scopes of the credential it was made from (and that key's or developer token's id, so
 * revoking it ends the session).
 */
export const authMigrations: Migration[] = [
  {
    // Who issued a developer token: 'sync' for the sign-in webhook (bounded per user), NULL for the CLI.
    id: "0004_dev_token_issuer",
    sql: `
      ALTER TABLE dev_tokens ADD COLUMN issued_by TEXT;
      CREATE INDEX dev_tokens_by_issuer ON dev_tokens (user_id, issued_by, created_at);
    `,
  },
  {
    id: "0500_app_sessions",
    sql: `
      CREATE TABLE app_sessions (
        id_hash TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        scopes TEXT NOT NULL,
        via TEXT NOT NULL,
        key_id TEXT,
        created_at TEXT NOT NULL,
        last_seen_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
      );
      CREATE INDEX app_sessions_by_user ON app_sessions (user_id);

      CREATE TABLE app_sign_in_links (
        token_hash TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        used_at TEXT
      );
      CREATE INDEX app_sign_in_links_by_user ON app_sign_in_links (user_id);
    `,
  },
  {
    // The developer token a session was made from: revoking (or deleting) the token ends the session.
    id: "0501_app_session_dev_tokens",
    sql: `ALTER TABLE app_sessions ADD COLUMN dev_token_id TEXT;`,
  },
];

/** API keys and developer tokens, this domain's part of the first migration (`0001_core`, in `src/migrations.ts`). */
export const credentialCoreTables = `
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        name TEXT,
        mode TEXT NOT NULL,
        lookup TEXT NOT NULL UNIQUE,
        secret_hash TEXT NOT NULL,
        scopes TEXT NOT NULL,
        created_at TEXT NOT NULL,
        last_used_at TEXT,
        revoked_at TEXT
      );
      CREATE INDEX api_keys_by_user ON api_keys (user_id);

      CREATE TABLE dev_tokens (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        lookup TEXT NOT NULL UNIQUE,
        secret_hash TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      );
`;
