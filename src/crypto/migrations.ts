import type { Migration } from "../db/migrate";

/**
 * Client-side encryption: chat messages written with a client key keep only
 * `encrypted_content` (their `content` is ''), and usernames are unique regardless of case.
 */
export const encryptionMigrations: Migration[] = [
  {
    id: "0200_encryption",
    sql: `
      ALTER TABLE chat_messages ADD COLUMN encrypted_content TEXT;
      CREATE UNIQUE INDEX profiles_user_name_ci ON profiles (lower(user_name));
    `,
  },
  {
    // Seal tags (seal-tags.ts): one row per stored field holding values sealed with a client's key.
    id: "0201_seal_tags",
    sql: `
      CREATE TABLE seal_tags (
        owner_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        record_id TEXT NOT NULL,
        field TEXT NOT NULL,
        tag TEXT NOT NULL,
        PRIMARY KEY (owner_id, kind, record_id, field)
      );
    `,
  },
];

/** Escrowed client keys, this domain's part of the first migration (`0001_core`, in `src/migrations.ts`). */
export const escrowCoreTables = `
      CREATE TABLE client_key_escrow (
        user_id TEXT PRIMARY KEY,
        wrapped_key TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
`;
