import type { OwnedTable } from "../db/owned-tables";
import { all, first, list, ownedKeysBySeq, ownedRowsByIds, run, sql, type Executor } from "../db/store";
import { memoryContentKey } from "./content-key";
import type { MemoryRow } from "./record";

export type { MemoryRow } from "./record";

/** The memory list's filters, as stored values (times as ISO strings). */
export interface ListFilters {
  workspaceId?: string;
  sessionId?: string;
  from?: string;
  to?: string;
}

/** A place in the memory list: the last memory of a page. */
export interface ListPosition {
  createdAt: string;
  id: string;
}

/**
 * The table's columns, each with the row field it holds: the one list that reading a row,
 * the insert and a user's export (`MEMORY_TABLE`) follow. A stored field is added here and
 * to `MemoryRow`; the check below fails to compile while one lacks the other.
 */
const COLUMNS = {
  owner_id: "ownerId",
  id: "id",
  content: "content",
  metadata: "metadata",
  workspace_id: "workspaceId",
  session_id: "sessionId",
  status: "status",
  created_at: "createdAt",
  updated_at: "updatedAt",
} as const satisfies Record<string, Exclude<keyof MemoryRow, "seq">>;
type Column = keyof typeof COLUMNS;
// Compiles only while every field of `MemoryRow` but `seq` has a column.
const everyFieldStored: Exclude<keyof MemoryRow, "seq" | (typeof COLUMNS)[Column]> extends never ? true : never = true;
void everyFieldStored;
const STORED_COLUMNS = Object.keys(COLUMNS) as Column[];
/** Columns holding JSON text. */
const JSON_COLUMNS: readonly Column[] = ["metadata"] as const;
type JsonColumn = "metadata";

/** A row as the driver answers it: each column of its field's type, JSON columns as text. */
type Stored = { [C in Column]: C extends JsonColumn ? string : MemoryRow[(typeof COLUMNS)[C]] } & {
  seq: number;
  content_key?: string | null;
};
const toRow = (r: Stored): MemoryRow => {
  const row: Record<string, unknown> = { seq: r.seq };
  for (const column of STORED_COLUMNS)
    row[COLUMNS[column]] = JSON_COLUMNS.includes(column) ? JSON.parse(r[column] as string) : r[column];
  return row as unknown as MemoryRow;
};
/** The stored values of a row, in `STORED_COLUMNS` order. */
const toValues = (row: Omit<MemoryRow, "seq">) =>
  STORED_COLUMNS.map((column) =>
    JSON_COLUMNS.includes(column) ? JSON.stringify(row[COLUMNS[column]]) : row[COLUMNS[column]],
  );

/**
 * The stored `content_key`: the exact-duplicate key, or `enc:<id>` for client-encrypted
 * content (exempt: unique per memory). NULL is left only on rows older than the rule.
 */
export const storedContentKey = (id: string, content: string) => memoryContentKey(content) ?? `enc:${id}`;

/** Memories in the store of record. Every query is scoped by owner: there is no unscoped read. */
export function createMemoryRepository() {
  return {
    /**
     * Inserts; returns the stored row, or null when the owner already has a memory with this
     * id or an exact duplicate of it in the same workspace (see `duplicateOf`): the unique
     * indexes decide, so concurrent writers cannot both insert.
     */
    async insert(tx: Executor, row: Omit<MemoryRow, "seq" | "status">): Promise<MemoryRow | null> {
      const values = [...toValues({ ...row, status: "active" }), storedContentKey(row.id, row.content)];
      const inserted = await first<{ seq: number }>(
        tx,
        sql`INSERT INTO memories (${sql.raw([...STORED_COLUMNS, "content_key"].join(", "))}) VALUES ${list(values)} ON CONFLICT DO NOTHING RETURNING seq`,
      );
      return inserted ? { ...row, seq: inserted.seq, status: "active" } : null;
    },
    /** The owner's memory in that workspace (null: none) whose normalised text equals `content`'s; null for encrypted content. */
    async duplicateOf(
      tx: Executor,
      ownerId: string,
      workspaceId: string | null,
      content: string,
    ): Promise<MemoryRow | null> {
      const key = memoryContentKey(content);
      if (key === null) return null;
      const r = await first<Stored>(
        tx,
        sql`SELECT * FROM memories WHERE owner_id = ${ownerId} AND COALESCE(workspace_id, '') = ${workspaceId ?? ""} AND content_key = ${key}`,
      );
      return r ? toRow(r) : null;
    },
    /**
     * Replaces a memory's content (and metadata, when given); false when the owner has no
     * such memory or another memory of the workspace already says the same (the unique index).
     */
    async updateContent(
      tx: Executor,
      ownerId: string,
      id: string,
      change: { content: string; metadata?: Record<string, unknown>; updatedAt: string },
    ): Promise<boolean> {
      const key = memoryContentKey(change.content);
      const stored = storedContentKey(id, change.content);
      const metadata = change.metadata === undefined ? sql`metadata` : sql`${JSON.stringify(change.metadata)}`;
      const clash =
        key === null
          ? null
          : await first<{ id: string }>(
              tx,
              sql`SELECT m.id FROM memories m JOIN memories t ON t.owner_id = m.owner_id AND COALESCE(t.workspace_id, '') = COALESCE(m.workspace_id, '')
            WHERE t.owner_id = ${ownerId} AND t.id = ${id} AND m.content_key = ${key} AND m.id <> ${id}`,
            );
      if (clash) return false;
      return (
        (await run(
          tx,
          sql`UPDATE memories SET content = ${change.content}, content_key = ${stored}, metadata = ${metadata}, updated_at = ${change.updatedAt}
                                WHERE owner_id = ${ownerId} AND id = ${id}`,
        )) > 0
      );
    },
    /**
     * Rows stored before the exact-duplicate rule (no key yet), a page at a time, given their
     * key; a row that duplicates one already keyed is marked `dup:<id>` (kept, never matched).
     */
    /** Whether rows older than the exact-duplicate rule are left (a plain read). */
    async anyUnkeyed(tx: Executor): Promise<boolean> {
      return (await first(tx, sql`SELECT 1 AS one FROM memories WHERE content_key IS NULL LIMIT 1`)) !== null;
    },
    async backfillContentKeys(tx: Executor, page = 500): Promise<number> {
      const rows = await all<Stored>(
        tx,
        sql`SELECT * FROM memories WHERE content_key IS NULL ORDER BY seq LIMIT ${page}`,
      );
      for (const r of rows) {
        const key = memoryContentKey(r.content);
        if (key === null) {
          await run(
            tx,
            sql`UPDATE memories SET content_key = ${storedContentKey(r.id, r.content)} WHERE owner_id = ${r.owner_id} AND id = ${r.id} AND content_key IS NULL`,
          );
          continue;
        }
        const taken = await first<{ id: string }>(
          tx,
          sql`SELECT id FROM memories WHERE owner_id = ${r.owner_id} AND COALESCE(workspace_id, '') = ${r.workspace_id ?? ""} AND content_key = ${key} AND id <> ${r.id}`,
        );
        // Only a row still without a key: another replica starting at once may have keyed it meanwhile.
        await run(
          tx,
          sql`UPDATE memories SET content_key = ${taken ? `dup:${r.id}` : key} WHERE owner_id = ${r.owner_id} AND id = ${r.id} AND content_key IS NULL`,
        );
      }
      return rows.length;
    },
    async get(tx: Executor, ownerId: string, id: string): Promise<MemoryRow | null> {
      const r = await first<Stored>(tx, sql`SELECT * FROM memories WHERE owner_id = ${ownerId} AND id = ${id}`);
      return r ? toRow(r) : null;
    },
    async getMany(tx: Executor, ownerId: string, ids: string[]): Promise<Map<string, MemoryRow>> {
      return new Map((await ownedRowsByIds<Stored>(tx, "memories", ownerId, ids)).map((r) => [r.id, toRow(r)]));
    },
    /**
     * Newest first by creation date, ties by id (descending), strictly after `before` in
     * that order (index `memories_by_created_at`); from the start when `before` is null;
     * only one workspace's when `workspaceId` is given.
     */
    async listPage(
      tx: Executor,
      ownerId: string,
      before: ListPosition | null,
      limit: number,
      filters: ListFilters = {},
    ): Promise<MemoryRow[]> {
      const after = before ? sql`AND (created_at, id) < (${before.createdAt}, ${before.id})` : sql``;
      const workspace = filters.workspaceId !== undefined ? sql`AND workspace_id = ${filters.workspaceId}` : sql``;
      const session = filters.sessionId !== undefined ? sql`AND session_id = ${filters.sessionId}` : sql``;
      const from = filters.from !== undefined ? sql`AND created_at >= ${filters.from}` : sql``;
      const to = filters.to !== undefined ? sql`AND created_at <= ${filters.to}` : sql``;
      const rows = await all<Stored>(
        tx,
        sql`SELECT * FROM memories WHERE owner_id = ${ownerId} ${workspace} ${session} ${from} ${to} ${after} ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
      );
      return rows.map(toRow);
    },
    /** New content and/or metadata; the updated row, or null when the owner has no such memory. */
    async update(
      tx: Executor,
      ownerId: string,
      id: string,
      changes: { content?: string; metadata?: Record<string, unknown>; updatedAt: string },
    ): Promise<MemoryRow | null> {
      const current = await first<Stored>(tx, sql`SELECT * FROM memories WHERE owner_id = ${ownerId} AND id = ${id}`);
      if (!current) return null;
      const row = toRow(current);
      const content = changes.content ?? row.content;
      const metadata = changes.metadata ?? row.metadata;
      await run(
        tx,
        sql`UPDATE memories SET content = ${content}, metadata = ${JSON.stringify(metadata)}, updated_at = ${changes.updatedAt} WHERE owner_id = ${ownerId} AND id = ${id}`,
      );
      return { ...row, content, metadata, updatedAt: changes.updatedAt };
    },
    /**
     * The two memories written just before and the two just after this one in the same
     * session. Only an explicit conversation (a session_id) makes neighbours: memories
     * merely stored one after another are unrelated.
     */
    async neighbours(
      tx: Executor,
      row: MemoryRow,
    ): Promise<Record<"earlier" | "previous" | "next" | "later", MemoryRow | null>> {
      if (row.sessionId === null) return { earlier: null, previous: null, next: null, later: null };
      const p = await all<Stored>(
        tx,
        sql`SELECT * FROM memories WHERE owner_id = ${row.ownerId} AND session_id = ${row.sessionId} AND seq < ${row.seq} ORDER BY seq DESC LIMIT 2`,
      );
      const n = await all<Stored>(
        tx,
        sql`SELECT * FROM memories WHERE owner_id = ${row.ownerId} AND session_id = ${row.sessionId} AND seq > ${row.seq} ORDER BY seq ASC LIMIT 2`,
      );
      const at = (rows: Stored[], i: number) => (rows[i] ? toRow(rows[i]) : null);
      return { earlier: at(p, 1), previous: at(p, 0), next: at(n, 0), later: at(n, 1) };
    },
    async delete(tx: Executor, ownerId: string, id: string): Promise<boolean> {
      return (await run(tx, sql`DELETE FROM memories WHERE owner_id = ${ownerId} AND id = ${id}`)) > 0;
    },
    /** Every (owner, id) for an index rebuild, in pages (no long-lived cursor or transaction). */
    allKeys: (tx: Executor): AsyncIterable<{ ownerId: string; id: string }> => ownedKeysBySeq(tx, "memories"),
    /** How many memories a workspace holds. */
    async countInWorkspace(tx: Executor, ownerId: string, workspaceId: string): Promise<number> {
      return Number(
        (
          await first<{ n: number }>(
            tx,
            sql`SELECT COUNT(*) AS n FROM memories WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId}`,
          )
        )?.n ?? 0,
      );
    },
    /** Deletes every memory of a workspace: the ids that went, and the conversations (sessions) they were part of. */
    async deleteWorkspace(
      tx: Executor,
      ownerId: string,
      workspaceId: string,
    ): Promise<{ ids: string[]; sessions: string[] }> {
      const sessions = (
        await all<{ session_id: string }>(
          tx,
          sql`SELECT DISTINCT session_id FROM memories WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} AND session_id IS NOT NULL`,
        )
      ).map((r) => r.session_id);
      const ids = (
        await all<{ id: string }>(
          tx,
          sql`DELETE FROM memories WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} RETURNING id`,
        )
      ).map((r) => r.id);
      return { ids, sessions };
    },
    /** The ids of the owner's memories in these conversations. */
    async idsInSessions(tx: Executor, ownerId: string, sessions: string[]): Promise<string[]> {
      const ids: string[] = [];
      for (let i = 0; i < sessions.length; i += 500) {
        const rows = await all<{ id: string }>(
          tx,
          sql`SELECT id FROM memories WHERE owner_id = ${ownerId} AND session_id IN ${list(sessions.slice(i, i + 500))}`,
        );
        ids.push(...rows.map((r) => r.id));
      }
      return ids;
    },
  };
}
export type MemoryRepository = ReturnType<typeof createMemoryRepository>;

/** Memories, as a user's export carries them. */
export const MEMORY_TABLE: OwnedTable = {
  table: "memories",
  owner: "owner_id",
  columns: STORED_COLUMNS,
  json: [...JSON_COLUMNS],
  orderBy: "seq",
  idColumns: ["id"],
};
