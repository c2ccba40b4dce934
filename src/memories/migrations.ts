import type { Migration } from "../db/migrate";

/**
 * The memory list is newest first by `created_at` (spec §4), ties by id: an import keeps
 * each memory's own creation date, so insertion order (`seq`) is not creation order.
 */
export const memoryMigrations: Migration[] = [
  {
    id: "0004_memories_by_created_at",
    sql: `CREATE INDEX memories_by_created_at ON memories (owner_id, created_at, id);`,
  },
];
