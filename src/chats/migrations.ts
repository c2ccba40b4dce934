import type { Migration } from "../db/migrate";

/**
 * Chat threads and their messages. Messages form a DAG (each names its parent) and
 * are listed in creation order; `message_count` is bumped in the append transaction.
 */
export const chatMigrations: Migration[] = [
  {
    id: "0120_chats",
    sql: `
      CREATE TABLE chat_threads (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        owner_id TEXT NOT NULL,
        workspace_id TEXT NOT NULL,
        id TEXT NOT NULL UNIQUE,
        title TEXT NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{}',
        message_count INTEGER NOT NULL DEFAULT 0,
        last_message_id TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX chat_threads_by_workspace ON chat_threads (owner_id, workspace_id, seq);

      CREATE TABLE chat_messages (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        owner_id TEXT NOT NULL,
        thread_id TEXT NOT NULL,
        id TEXT NOT NULL UNIQUE,
        parent_id TEXT,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE INDEX chat_messages_by_thread ON chat_messages (owner_id, thread_id, seq);
    `,
  },
  {
    // Thread and message ids are unique per owner, not across users: a client chooses a
    // captured thread's id (X-Svc-Thread), and another user's use of the same id must not
    // refuse this user's capture. Both tables are rebuilt (SQLite cannot drop a column's
    // UNIQUE); rows keep their creation order, so `seq` is renumbered in that order.
    id: "0550_chat_ids_per_owner",
    sql: `
      CREATE TABLE chat_threads_owned (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        owner_id TEXT NOT NULL,
        workspace_id TEXT NOT NULL,
        id TEXT NOT NULL,
        title TEXT NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{}',
        message_count INTEGER NOT NULL DEFAULT 0,
        last_message_id TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (owner_id, id)
      );
      INSERT INTO chat_threads_owned (owner_id, workspace_id, id, title, metadata, message_count, last_message_id, created_at, updated_at)
        SELECT owner_id, workspace_id, id, title, metadata, message_count, last_message_id, created_at, updated_at FROM chat_threads ORDER BY seq;
      DROP TABLE chat_threads;
      ALTER TABLE chat_threads_owned RENAME TO chat_threads;
      CREATE INDEX chat_threads_by_workspace ON chat_threads (owner_id, workspace_id, seq);

      CREATE TABLE chat_messages_owned (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        owner_id TEXT NOT NULL,
        thread_id TEXT NOT NULL,
        id TEXT NOT NULL,
        parent_id TEXT,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at TEXT NOT NULL,
        encrypted_content TEXT,
        UNIQUE (owner_id, id)
      );
      INSERT INTO chat_messages_owned (owner_id, thread_id, id, parent_id, role, content, created_at, encrypted_content)
        SELECT owner_id, thread_id, id, parent_id, role, content, created_at, encrypted_content FROM chat_messages ORDER BY seq;
      DROP TABLE chat_messages;
      ALTER TABLE chat_messages_owned RENAME TO chat_messages;
      CREATE INDEX chat_messages_by_thread ON chat_messages (owner_id, thread_id, seq);
    `,
  },
];
