import type { Migration } from "../db/migrate";

/**
 * Files and upload sessions. The bytes live in the blob store (LanceDB, `blob_id`);
 * the store of record holds what a file is, its extracted text blocks (what the
 * search index is rebuilt from) and open upload sessions with their parts.
 * `key` is globally unique: a presigned URL names it alone.
 */
export const fileMigrations: Migration[] = [
  {
    id: "0400_files",
    sql: `
      CREATE TABLE files (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        owner_id TEXT NOT NULL,
        workspace_id TEXT NOT NULL,
        key TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        content_type TEXT NOT NULL,
        size INTEGER NOT NULL,
        sha256 TEXT NOT NULL,
        blob_id TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX files_by_workspace ON files (owner_id, workspace_id, seq);

      CREATE TABLE file_blocks (
        owner_id TEXT NOT NULL,
        file_key TEXT NOT NULL,
        position INTEGER NOT NULL,
        content TEXT NOT NULL,
        PRIMARY KEY (file_key, position)
      );

      -- A presigned URL issued and not yet used: the name and owner the PUT will store under.
      CREATE TABLE file_intents (
        key TEXT PRIMARY KEY,
        owner_id TEXT NOT NULL,
        workspace_id TEXT NOT NULL,
        name TEXT NOT NULL,
        content_type TEXT NOT NULL,
        expires_at INTEGER NOT NULL
      );
      CREATE INDEX file_intents_by_expiry ON file_intents (expires_at);
    `,
  },
  {
    id: "0415_files_sealed_single_use_urls",
    sql: `
      -- 1: the bytes are sealed with the owner's client key (reverse-proxy mode, src/crypto/file-seal.ts);
      -- size and sha256 then describe the sealed bytes as stored.
      ALTER TABLE files ADD COLUMN sealed INTEGER NOT NULL DEFAULT 0;
      -- A session started in reverse-proxy mode keeps its parts sealed.
      ALTER TABLE upload_sessions ADD COLUMN sealed INTEGER NOT NULL DEFAULT 0;
      -- When the URL's one upload committed (null: not yet); a used URL is refused.
      ALTER TABLE file_intents ADD COLUMN used_at INTEGER;
    `,
  },
  {
    // Where a file's text stands (src/files/text.ts TextStatus; null: stored before, read at
    // upload) and, for PDFs, which process is reading it until when (ms since the epoch).
    // PDFs stored before with more text than is now indexed were read without bounds:
    // they are read once more, within them. (Statements are split at semicolons: `_`
    // stands for the one in `application/pdf; …`.) Sealed files were never read.
    id: "0440_file_text_status",
    sql: `
      ALTER TABLE files ADD COLUMN text_status TEXT;
      ALTER TABLE files ADD COLUMN text_reason TEXT;
      ALTER TABLE files ADD COLUMN text_claimed_until INTEGER;
      CREATE INDEX files_text_pending ON files (seq) WHERE text_status = 'pending';
      UPDATE files SET text_status = 'pending'
        WHERE (content_type = 'application/pdf' OR content_type LIKE 'application/pdf_ %')
          AND key IN (SELECT file_key FROM file_blocks GROUP BY file_key HAVING SUM(LENGTH(content)) > 5242880);
      UPDATE files SET text_status = 'not_indexed', text_reason = 'sealed' WHERE sealed = 1;
    `,
  },
];
