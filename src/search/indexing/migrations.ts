import type { Migration } from "../../db/migrate";

/** Schema of the search side's own tables in the store of record (the index itself lives in LanceDB). */
export const searchMigrations: Migration[] = [
  {
    id: "0003_embedding_cache_refs",
    sql: `
      -- Which cache entries each source's index items use now: an entry no source uses
      -- (its last memory, block or message was deleted or changed) is removed.
      CREATE TABLE embedding_refs (
        source_key TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        PRIMARY KEY (source_key, text_hash)
      ) WITHOUT ROWID;
      CREATE INDEX embedding_refs_by_hash ON embedding_refs (text_hash);

      -- Entries written before were keyed by text alone and used by no known source:
      -- nothing could ever remove them, so they go (a rebuild embeds again).
      DELETE FROM embedding_cache;
      -- Last use (ms since the epoch): past the size bound the least recently used go first.
      ALTER TABLE embedding_cache ADD COLUMN used_at INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX embedding_cache_by_use ON embedding_cache (used_at);
    `,
  },
  {
    id: "0500_search_term_stats",
    sql: `
      -- Each owner's full-text statistics (indexing/term-stats.ts): a row per indexed item
      -- with its analysed terms, word vector and time, and per owner and partition group the items holding each
      -- term and the items' count and total length. Written with the outbox, in one
      -- transaction; a search scores with them, never with the index's physical state.
      CREATE TABLE search_terms (
        owner_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        source_id TEXT NOT NULL,
        item_id TEXT NOT NULL,
        grp TEXT NOT NULL,
        terms TEXT NOT NULL,
        context TEXT NOT NULL,
        wvec TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (owner_id, kind, source_id, item_id)
      ) WITHOUT ROWID;
      CREATE TABLE search_df (
        owner_id TEXT NOT NULL,
        grp TEXT NOT NULL,
        term TEXT NOT NULL,
        df INTEGER NOT NULL,
        PRIMARY KEY (owner_id, grp, term)
      ) WITHOUT ROWID;
      CREATE TABLE search_corpus (
        owner_id TEXT NOT NULL,
        grp TEXT NOT NULL,
        items INTEGER NOT NULL,
        length INTEGER NOT NULL,
        PRIMARY KEY (owner_id, grp)
      ) WITHOUT ROWID;
    `,
  },
  {
    id: "0545_index_purges",
    sql: `
      -- Index tables whose deleted rows are still in their files, and when the earliest
      -- such delete was written (ms since the epoch): the index writer rewrites each
      -- within MNEMO_PURGE_WITHIN_MS of it (indexing/index-purge.ts). Kept here, not in
      -- the writer's memory, so a restart or another replica taking over finishes them.
      CREATE TABLE index_purges (
        table_name TEXT PRIMARY KEY,
        deleted_at INTEGER NOT NULL
      ) WITHOUT ROWID;
    `,
  },
  {
    id: "0560_outbox_by_owner_seq",
    sql: `
      -- A search reads an owner's outbox rows after the last seq it saw (query/pending-index.ts):
      -- a range of this index, whatever the size of the backlog.
      DROP INDEX outbox_by_owner;
      CREATE INDEX outbox_by_owner ON outbox (owner_id, stage, seq);
    `,
  },
  {
    id: "0570_search_corpus_version",
    sql: `
      -- Moves on with every change to an owner's items of a group (the write's own
      -- transaction bumps it): a search that finds it where it was reuses what it read
      -- before (query/forward-cache.ts, query/pending-index.ts).
      ALTER TABLE search_corpus ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
    `,
  },
  {
    // Word vectors are stored as their bytes (analysis/item-terms.ts encodeVector), 100 a
    // row, not as base64 text (136). SQLite keeps whatever a row holds: rows written before
    // keep their text, which is read as before, until written again.
    id: "0600_search_terms_vector_bytes",
    sql: `-- nothing to change on SQLite`,
    postgres: `ALTER TABLE search_terms ALTER COLUMN wvec TYPE BYTEA USING decode(wvec, 'base64')`,
  },
  {
    // A cached vector (1.5 KB at 384 dimensions) is larger than SQLite keeps inside a page of
    // a WITHOUT ROWID table (about 1 KB at 4 KB pages): each row spilled into an overflow page
    // of its own, about 4.5 KB on disk a vector. A rowid table keeps rows up to about 4 KB in
    // its pages. The rows are copied; PostgreSQL keeps large values out of line by itself.
    id: "0610_embedding_cache_in_pages",
    sql: `
      CREATE TABLE embedding_cache_next (
        space_id TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        vector BLOB NOT NULL,
        used_at INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (space_id, text_hash)
      );
      INSERT INTO embedding_cache_next (space_id, text_hash, vector, used_at)
        SELECT space_id, text_hash, vector, used_at FROM embedding_cache;
      DROP TABLE embedding_cache;
      ALTER TABLE embedding_cache_next RENAME TO embedding_cache;
      CREATE INDEX embedding_cache_by_use ON embedding_cache (used_at);
    `,
    postgres: `-- nothing to change on PostgreSQL`,
  },
];

/** The outbox and the embedding cache, the search side's part of the first migration (`0001_core`, in `src/migrations.ts`). */
export const searchCoreTables = `
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


      -- Vectors already computed, keyed by vector space and text hash: a reindex or a
      -- retry after an embedder outage does not pay for the model again.
      CREATE TABLE embedding_cache (
        space_id TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (space_id, text_hash)
      ) WITHOUT ROWID;
`;
