import type { Migration } from "../db/migrate";

/** Uploads in parts: a session per upload and its parts' blobs, until the upload completes into a file. */
export const uploadMigrations: Migration[] = [
  {
    id: "0410_upload_sessions",
    sql: `
      CREATE TABLE upload_sessions (
        id TEXT PRIMARY KEY,
        owner_id TEXT NOT NULL,
        workspace_id TEXT NOT NULL,
        name TEXT NOT NULL,
        content_type TEXT NOT NULL,
        total_bytes INTEGER NOT NULL DEFAULT 0,
        -- 1 while one request assembles the parts (a second complete or a late part gets 409).
        completing INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        touched_at INTEGER NOT NULL
      );
      CREATE INDEX upload_sessions_by_owner ON upload_sessions (owner_id, touched_at);
      CREATE INDEX upload_sessions_by_touch ON upload_sessions (touched_at);

      CREATE TABLE upload_parts (
        upload_id TEXT NOT NULL,
        part_number INTEGER NOT NULL,
        blob_id TEXT NOT NULL,
        size INTEGER NOT NULL,
        PRIMARY KEY (upload_id, part_number)
      );
    `,
  },
];
