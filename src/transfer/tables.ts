import { all, chunks, list, sql, type Executor, type Sql } from "../db/store";

/**
 * The tables a user's export carries, in the order they are written and restored (a
 * workspace before what lives in it). Each record of the export is one stored row:
 * the columns as stored, JSON columns parsed, `seq` left out (import appends in the
 * exported order, so relative order, and so every list order, is kept).
 */
export interface TableSpec {
  /** The record's `type` in the export. */
  type: string;
  table: string;
  /** The column that names the owner; rewritten to the importing user. */
  owner: string;
  /** Stored columns, owner first, in export order. */
  columns: string[];
  /** Columns holding JSON text. */
  json?: string[];
  /** Export order (code constant). */
  orderBy: string;
  /** The owner-scoped key of a row: what tells a re-run (the owner has it) from a collision. */
  idColumns: string[];
  /**
   * Stored columns that are not exported, with the value an import gives them: internal
   * pointers that mean nothing in another data dir (a file's blob id).
   */
  hidden?: Record<string, unknown>;
}

export const TABLES: TableSpec[] = [
  {
    type: "profile", table: "profiles", owner: "user_id", columns: ["user_id", "user_name", "display_name", "age", "created_at", "updated_at"],
    orderBy: "user_id", idColumns: ["user_id"],
  },
  {
    type: "workspace", table: "workspaces", owner: "owner_id", columns: ["owner_id", "id", "name", "created_at", "updated_at"],
    orderBy: "seq", idColumns: ["id"],
  },
  {
    type: "workspace_artifact", table: "workspace_artifacts", owner: "owner_id", columns: ["owner_id", "workspace_id", "kind", "value", "updated_at"],
    json: ["value"], orderBy: "workspace_id, kind", idColumns: ["workspace_id", "kind"],
  },
  {
    type: "memory", table: "memories", owner: "owner_id",
    columns: ["owner_id", "id", "content", "metadata", "workspace_id", "session_id", "status", "created_at", "updated_at"],
    json: ["metadata"], orderBy: "seq", idColumns: ["id"],
  },
  {
    type: "document", table: "documents", owner: "owner_id",
    columns: [
      "owner_id", "workspace_id", "id", "document_type", "title", "slug", "root_block_id", "notebook_id", "document_payload", "blocks_payload",
      "markdown", "metadata", "indexable_blocks", "created_at", "updated_at",
    ],
    json: ["document_payload", "blocks_payload", "metadata", "indexable_blocks"], orderBy: "seq", idColumns: ["id"],
  },
  {
    type: "indexed_document", table: "indexed_documents", owner: "owner_id",
    columns: ["owner_id", "document_id", "workspace_id", "document_type", "title", "root_block_id", "metadata", "blocks", "created_at", "indexed_at"],
    json: ["metadata", "blocks"], orderBy: "document_id", idColumns: ["document_id"],
  },
  {
    type: "chat_thread", table: "chat_threads", owner: "owner_id",
    columns: ["owner_id", "workspace_id", "id", "title", "metadata", "message_count", "last_message_id", "created_at", "updated_at"],
    json: ["metadata"], orderBy: "seq", idColumns: ["id"],
  },
  {
    type: "chat_message", table: "chat_messages", owner: "owner_id",
    columns: ["owner_id", "thread_id", "id", "parent_id", "role", "content", "encrypted_content", "created_at"],
    orderBy: "seq", idColumns: ["id"],
  },
  {
    type: "file", table: "files", owner: "owner_id",
    columns: ["owner_id", "workspace_id", "key", "name", "content_type", "size", "sha256", "blob_id", "created_at", "updated_at", "sealed"],
    hidden: { blob_id: "" }, orderBy: "seq", idColumns: ["key"],
  },
  {
    // The text extracted from a file: what the search index is rebuilt from.
    type: "file_block", table: "file_blocks", owner: "owner_id", columns: ["owner_id", "file_key", "position", "content"],
    orderBy: "file_key, position", idColumns: ["file_key", "position"],
  },
];

export const TABLE_BY_TYPE = new Map(TABLES.map((spec) => [spec.type, spec]));

/** A stored row as an export record: `{type, ...columns}` with JSON columns parsed and the owner column dropped. */
export function toRecord(spec: TableSpec, row: Record<string, unknown>): Record<string, unknown> {
  const record: Record<string, unknown> = { type: spec.type };
  for (const column of spec.columns) {
    if (column === spec.owner || (spec.hidden && column in spec.hidden)) continue;
    const value = row[column] ?? null;
    record[column] = spec.json?.includes(column) && typeof value === "string" ? JSON.parse(value) : value;
  }
  return record;
}

/** An export record back into column values for `ownerId` (JSON columns serialized). Throws naming a missing column. */
export function fromRecord(spec: TableSpec, record: Record<string, unknown>, ownerId: string): unknown[] {
  return spec.columns.map((column) => {
    if (column === spec.owner) return ownerId;
    if (spec.hidden && column in spec.hidden) return spec.hidden[column];
    // encrypted_content came with the encryption feature: older exports lack it.
    if (!(column in record)) {
      if (column === "encrypted_content") return null;
      // So did a file's `sealed` flag (reverse-proxy mode).
      if (column === "sealed") return 0;
      throw new Error(`${spec.type}: missing field '${column}'`);
    }
    const value = record[column];
    return spec.json?.includes(column) ? JSON.stringify(value ?? null) : value;
  });
}

/** Every row of `spec`'s table owned by `ownerId`, in pages (no long-lived cursor). */
export async function* ownedRows(tx: Executor, spec: TableSpec, ownerId: string, page = 1_000): AsyncGenerator<Record<string, unknown>> {
  const cols = sql.raw(spec.columns.join(", "));
  const order = sql.raw(spec.orderBy);
  for (let offset = 0; ; offset += page) {
    // Keyset paging needs a per-table key; OFFSET on the owner's index is simple and an export is a one-off.
    const rows = await all<Record<string, unknown>>(
      tx,
      sql`SELECT ${cols} FROM ${sql.table(spec.table)} WHERE ${sql.raw(spec.owner)} = ${ownerId} ORDER BY ${order} LIMIT ${page} OFFSET ${offset}`,
    );
    yield* rows;
    if (rows.length < page) return;
  }
}

/** How one batch of rows went: which were new, which the owner already had, which collide with another owner's (or a unique name). */
export interface InsertOutcome {
  inserted: number[];
  existing: number[];
  conflicting: number[];
}

/**
 * Inserts rows (column values in `spec.columns` order) for `ownerId` in multi-row
 * statements; a row that collides with a stored one is left as it is. A collision is
 * `existing` when the owner already has a row with that id (a re-run), else
 * `conflicting` (an id of another user's, or a taken slug or user name).
 */
export async function insertRows(tx: Executor, spec: TableSpec, ownerId: string, rows: unknown[][]): Promise<InsertOutcome> {
  const outcome: InsertOutcome = { inserted: [], existing: [], conflicting: [] };
  const perStatement = Math.max(1, Math.floor(4_000 / spec.columns.length));
  // The unit separator joins key columns (PostgreSQL text cannot hold NUL).
  const key = spec.idColumns.join(" || '\u001f' || ");
  const at = spec.idColumns.map((c) => spec.columns.indexOf(c));
  const keyOf = (row: unknown[]) => at.map((j) => String(row[j])).join("\u001f");
  for (let start = 0; start < rows.length; start += perStatement) {
    const chunk = rows.slice(start, start + perStatement);
    const values: Sql[] = chunk.map((row) => sql`(${sql.join(row)})`);
    const returned = await all<{ k: string }>(
      tx,
      sql`INSERT INTO ${sql.table(spec.table)} (${sql.raw(spec.columns.join(", "))}) VALUES ${sql.join(values)}
          ON CONFLICT DO NOTHING RETURNING ${sql.raw(key)} AS k`,
    );
    const fresh = new Set(returned.map((r) => r.k));
    const missed = chunk.flatMap((row, i) => (fresh.has(keyOf(row)) ? [] : [i]));
    const owned = missed.length ? await ownedKeys(tx, spec, ownerId, missed.map((i) => chunk[i])) : new Set<string>();
    chunk.forEach((row, i) => {
      if (fresh.has(keyOf(row))) outcome.inserted.push(start + i);
      else if (owned.has(keyOf(row))) outcome.existing.push(start + i);
      else outcome.conflicting.push(start + i);
    });
  }
  return outcome;
}

/** Keys among `rows` that `ownerId` already has (the key is the owner-scoped primary or unique key). */
async function ownedKeys(tx: Executor, spec: TableSpec, ownerId: string, rows: unknown[][]): Promise<Set<string>> {
  const first = spec.columns.indexOf(spec.idColumns[0]);
  const key = spec.idColumns.join(" || '\u001f' || ");
  const found = new Set<string>();
  for (const part of chunks([...new Set(rows.map((row) => row[first]))])) {
    const stored = await all<{ k: string }>(
      tx,
      sql`SELECT ${sql.raw(key)} AS k FROM ${sql.table(spec.table)} WHERE ${sql.raw(spec.owner)} = ${ownerId} AND ${sql.raw(spec.idColumns[0])} IN ${list(part)}`,
    );
    for (const r of stored) found.add(r.k);
  }
  return found;
}
