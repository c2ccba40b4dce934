import type { Database } from "bun:sqlite";
import { selectOwnedByIds } from "../db/select-in";

export interface MemoryRow {
  seq: number;
  ownerId: string;
  id: string;
  content: string;
  metadata: Record<string, unknown>;
  workspaceId: string | null;
  sessionId: string | null;
  status: "active";
  createdAt: string;
  updatedAt: string;
}

type Stored = {
  seq: number; owner_id: string; id: string; content: string; metadata: string; workspace_id: string | null;
  session_id: string | null; status: "active"; created_at: string; updated_at: string;
};
const toRow = (r: Stored): MemoryRow => ({
  seq: r.seq, ownerId: r.owner_id, id: r.id, content: r.content, metadata: JSON.parse(r.metadata),
  workspaceId: r.workspace_id, sessionId: r.session_id, status: r.status, createdAt: r.created_at, updatedAt: r.updated_at,
});

/** Memories in SQLite. Every query is scoped by owner: there is no unscoped read. */
export function createMemoryRepository(db: Database) {
  const insert = db.query<{ seq: number }, [string, string, string, string, string | null, string | null, string, string]>(
    `INSERT INTO memories (owner_id, id, content, metadata, workspace_id, session_id, status, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, 'active', ?, ?) RETURNING seq`,
  );
  const getOne = db.query<Stored, [string, string]>("SELECT * FROM memories WHERE owner_id = ? AND id = ?");
  const page = db.query<Stored, [string, number, number]>(
    "SELECT * FROM memories WHERE owner_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?",
  );
  const remove = db.query("DELETE FROM memories WHERE owner_id = ? AND id = ?");
  const before = db.query<Stored, [string, string, number]>(
    "SELECT * FROM memories WHERE owner_id = ? AND session_id = ? AND seq < ? ORDER BY seq DESC LIMIT 2",
  );
  const after = db.query<Stored, [string, string, number]>(
    "SELECT * FROM memories WHERE owner_id = ? AND session_id = ? AND seq > ? ORDER BY seq ASC LIMIT 2",
  );
  return {
    /** Inserts; returns the stored row, or null when the owner already has a memory with this id. */
    insert(row: Omit<MemoryRow, "seq" | "status">): MemoryRow | null {
      try {
        const { seq } = insert.get(row.ownerId, row.id, row.content, JSON.stringify(row.metadata), row.workspaceId, row.sessionId, row.createdAt, row.updatedAt)!;
        return { ...row, seq, status: "active" };
      } catch (error) {
        if (String((error as Error).message).includes("UNIQUE constraint failed")) return null;
        throw error;
      }
    },
    get(ownerId: string, id: string): MemoryRow | null {
      const r = getOne.get(ownerId, id);
      return r ? toRow(r) : null;
    },
    getMany(ownerId: string, ids: string[]): Map<string, MemoryRow> {
      return new Map(selectOwnedByIds<Stored>(db, "memories", "id", ownerId, ids).map((r) => [r.id, toRow(r)]));
    },
    /** Newest first, strictly older than `beforeSeq`. */
    listPage(ownerId: string, beforeSeq: number, limit: number): MemoryRow[] {
      return page.all(ownerId, beforeSeq, limit).map(toRow);
    },
    /**
     * The two memories written just before and the two just after this one in the same
     * session. Only an explicit conversation (a session_id) makes neighbours: memories
     * merely stored one after another are unrelated.
     */
    neighbours(row: MemoryRow): Record<"earlier" | "previous" | "next" | "later", MemoryRow | null> {
      if (row.sessionId === null) return { earlier: null, previous: null, next: null, later: null };
      const p = before.all(row.ownerId, row.sessionId, row.seq);
      const n = after.all(row.ownerId, row.sessionId, row.seq);
      const at = (rows: Stored[], i: number) => (rows[i] ? toRow(rows[i]) : null);
      return { earlier: at(p, 1), previous: at(p, 0), next: at(n, 0), later: at(n, 1) };
    },
    delete(ownerId: string, id: string): boolean {
      return remove.run(ownerId, id).changes > 0;
    },
    /** Every (owner, id) for an index rebuild, streamed. */
    *allKeys(): Iterable<{ ownerId: string; id: string }> {
      for (const r of db.query<{ owner_id: string; id: string }, []>("SELECT owner_id, id FROM memories ORDER BY seq").iterate()) {
        yield { ownerId: r.owner_id, id: r.id };
      }
    },
  };
}
export type MemoryRepository = ReturnType<typeof createMemoryRepository>;
