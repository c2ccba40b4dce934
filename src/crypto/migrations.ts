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
];
