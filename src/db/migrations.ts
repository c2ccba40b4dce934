import type { Migration } from "./migrate";

/**
 * The core schema. Domains added later append their own migrations (ids sort after
 * these) in `src/migrations.ts`; a migration once released is never edited.
 */
export const coreMigrations: Migration[] = [
  {
    id: "0001_core",
    sql: `
      CREATE TABLE memories (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        owner_id TEXT NOT NULL,
        id TEXT NOT NULL,
        content TEXT NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{}',
        workspace_id TEXT,
        session_id TEXT,
        status TEXT NOT NULL DEFAULT 'active',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (owner_id, id)
      );
      CREATE INDEX memories_by_owner ON memories (owner_id, seq);

      -- Changes waiting to reach the search index. A row names a source (a memory, a
      -- document, a thread); the indexer re-reads its current state, so replaying a row
      -- is harmless. Rows move from stage 'text' to 'vector' (embedding) and are deleted.
      CREATE TABLE outbox (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        owner_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        source_id TEXT NOT NULL,
        op TEXT NOT NULL,
        stage TEXT NOT NULL DEFAULT 'text',
        attempts INTEGER NOT NULL DEFAULT 0,
        available_at INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX outbox_by_stage ON outbox (stage, seq);
      CREATE INDEX outbox_by_owner ON outbox (owner_id, stage);

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

      CREATE TABLE profiles (
        user_id TEXT PRIMARY KEY,
        user_name TEXT UNIQUE,
        display_name TEXT,
        age INTEGER,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );

      CREATE TABLE client_key_escrow (
        user_id TEXT PRIMARY KEY,
        wrapped_key TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );

      -- Vectors already computed, keyed by vector space and text hash: a reindex or a
      -- retry after an embedder outage does not pay for the model again.
      CREATE TABLE embedding_cache (
        space_id TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (space_id, text_hash)
      ) WITHOUT ROWID;

      -- Who runs the indexer: one process at a time writes the LanceDB index.
      CREATE TABLE leases (
        name TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        expires_at INTEGER NOT NULL
      );

      CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
    `,
  },
  {
    id: "0002_memory_sessions",
    sql: `CREATE INDEX memories_by_session ON memories (owner_id, session_id, seq) WHERE session_id IS NOT NULL;`,
  },
  {
    // Who issued a developer token: 'sync' for the sign-in webhook (bounded per user), NULL for the CLI.
    id: "0004_dev_token_issuer",
    sql: `
      ALTER TABLE dev_tokens ADD COLUMN issued_by TEXT;
      CREATE INDEX dev_tokens_by_issuer ON dev_tokens (user_id, issued_by, created_at);
    `,
  },
];
