import type { Migration } from "../db/migrate";

/** Each live memory's newest version gives up its copy of the text the memory holds. */
const CURRENT_TEXT_ONCE = `
      UPDATE memory_versions SET content = NULL
        WHERE event <> 'deleted'
          AND seq = (SELECT MAX(v.seq) FROM memory_versions v
                     WHERE v.owner_id = memory_versions.owner_id AND v.memory_id = memory_versions.memory_id)
          AND content = (SELECT m.content FROM memories m
                         WHERE m.owner_id = memory_versions.owner_id AND m.id = memory_versions.memory_id);
`;

/**
 * The memory list is newest first by `created_at` (docs/api.md#core-and-memories), ties by id: an import keeps
 * each memory's own creation date, so insertion order (`seq`) is not creation order.
 */
export const memoryMigrations: Migration[] = [
  {
    id: "0002_memory_sessions",
    sql: `CREATE INDEX memories_by_session ON memories (owner_id, session_id, seq) WHERE session_id IS NOT NULL;`,
  },
  {
    id: "0004_memories_by_created_at",
    sql: `CREATE INDEX memories_by_created_at ON memories (owner_id, created_at, id);`,
  },
  {
    // The exact-duplicate rule (memories/content-key.ts): one memory per owner, workspace and
    // normalised text. NULL (client-encrypted content; rows stored before this) is exempt;
    // `backfillContentKeys` fills the older rows at start.
    id: "0520_memories_content_key",
    sql: `
      ALTER TABLE memories ADD COLUMN content_key TEXT;
      CREATE UNIQUE INDEX memories_by_content_key ON memories (owner_id, (COALESCE(workspace_id, '')), content_key);
    `,
  },
  {
    // A memory's versions: created, updated (the content before and after), deleted; each
    // with where it came from (API, MCP, import, extraction: thread, messages, model).
    id: "0521_memory_versions",
    sql: `
      CREATE TABLE memory_versions (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        owner_id TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        event TEXT NOT NULL,
        content TEXT NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{}',
        workspace_id TEXT,
        source TEXT NOT NULL DEFAULT '{}',
        at TEXT NOT NULL
      );
      CREATE INDEX memory_versions_by_memory ON memory_versions (owner_id, memory_id, seq);
    `,
  },
  {
    // Changes automatic formation (capture) proposed to memories a person wrote: applied only
    // once that person accepts. `memory_updated_at` is the memory as the model saw it.
    id: "0545_memory_proposals",
    sql: `
      CREATE TABLE memory_proposals (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        owner_id TEXT NOT NULL,
        id TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        workspace_id TEXT,
        action TEXT NOT NULL,
        content TEXT,
        memory_updated_at TEXT NOT NULL,
        thread_id TEXT,
        message_ids TEXT NOT NULL DEFAULT '[]',
        model TEXT,
        created_at TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending',
        decided_at TEXT
      );
      CREATE UNIQUE INDEX memory_proposals_by_id ON memory_proposals (owner_id, id);
      CREATE INDEX memory_proposals_by_status ON memory_proposals (owner_id, status, seq);
      CREATE INDEX memory_proposals_by_memory ON memory_proposals (owner_id, memory_id);
    `,
  },
  {
    // A memory's newest version holds no copy of its text while the memory says it
    // (content NULL: history-repository.ts), so a memory never written again keeps its text
    // once, not twice. SQLite cannot drop a NOT NULL: the table is copied.
    id: "0580_memory_versions_current_text",
    sql: `
      CREATE TABLE memory_versions_next (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        owner_id TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        event TEXT NOT NULL,
        content TEXT,
        metadata TEXT NOT NULL DEFAULT '{}',
        workspace_id TEXT,
        source TEXT NOT NULL DEFAULT '{}',
        at TEXT NOT NULL
      );
      INSERT INTO memory_versions_next (seq, owner_id, memory_id, event, content, metadata, workspace_id, source, at)
        SELECT seq, owner_id, memory_id, event, content, metadata, workspace_id, source, at FROM memory_versions;
      DROP TABLE memory_versions;
      ALTER TABLE memory_versions_next RENAME TO memory_versions;
      CREATE INDEX memory_versions_by_memory ON memory_versions (owner_id, memory_id, seq);
      ${CURRENT_TEXT_ONCE}
    `,
    postgres: `
      ALTER TABLE memory_versions ALTER COLUMN content DROP NOT NULL;
      ${CURRENT_TEXT_ONCE}
    `,
  },
  {
    // The exact-duplicate key keeps the first 32 hex digits of its SHA-256 (content-key.ts):
    // the keys stored before, all 64, become what the rule computes now. Keys of exempt
    // rows (`enc:`, `dup:`) are shorter and stay.
    id: "0590_memories_content_key_128",
    sql: `UPDATE memories SET content_key = substr(content_key, 1, 32) WHERE length(content_key) = 64`,
  },
];

/** The memories table, this domain's part of the first migration (`0001_core`, in `src/migrations.ts`). */
export const memoryCoreTables = `
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
`;
