import type { Migration } from "../db/migrate";

/**
 * One document store, two views. `documents` holds every document, whether written
 * through the unified routes or the legacy notes routes. `indexed_documents` is the
 * derived-index view: the blocks the search index is fed from. Unified writes and
 * `reindex` copy a document's indexable blocks into it; legacy writes do not touch it,
 * so a legacy delete leaves its entry (and the search hits) behind until `reindex`.
 */
export const documentMigrations: Migration[] = [
  {
    id: "0110_documents",
    sql: `
      CREATE TABLE documents (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        owner_id TEXT NOT NULL,
        workspace_id TEXT NOT NULL,
        id TEXT NOT NULL,
        document_type TEXT NOT NULL,
        title TEXT NOT NULL,
        slug TEXT NOT NULL,
        root_block_id TEXT NOT NULL,
        notebook_id TEXT,
        document_payload TEXT NOT NULL,   -- JSON: an object, an envelope, or an 'iv:tag:ct' string
        blocks_payload TEXT NOT NULL,     -- JSON: an array, an envelope, or an 'iv:tag:ct' string
        markdown TEXT NOT NULL DEFAULT '',
        metadata TEXT NOT NULL DEFAULT '{}',
        indexable_blocks TEXT NOT NULL DEFAULT '[]', -- the plaintext sidecar, as sent
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (owner_id, id),
        UNIQUE (owner_id, workspace_id, slug)
      );
      CREATE INDEX documents_by_workspace ON documents (owner_id, workspace_id, seq);

      CREATE TABLE indexed_documents (
        owner_id TEXT NOT NULL,
        document_id TEXT NOT NULL,
        workspace_id TEXT NOT NULL,
        document_type TEXT NOT NULL,
        title TEXT NOT NULL,
        metadata TEXT NOT NULL,
        blocks TEXT NOT NULL,             -- JSON array of {id, type, content}
        created_at TEXT NOT NULL,
        indexed_at TEXT NOT NULL,
        PRIMARY KEY (owner_id, document_id)
      ) WITHOUT ROWID;
      CREATE INDEX indexed_documents_by_workspace ON indexed_documents (owner_id, workspace_id);
    `,
  },
  {
    // The title is indexed as an item of its own, under the document's root block id.
    id: "0111_indexed_documents_root_block",
    sql: `ALTER TABLE indexed_documents ADD COLUMN root_block_id TEXT;`,
  },
];
