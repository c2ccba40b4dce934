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
];
