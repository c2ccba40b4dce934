import type { Database } from "bun:sqlite";

export interface WorkspaceRow {
  ownerId: string;
  id: string;
  name: string;
  createdAt: string;
  updatedAt: string;
}

type Stored = { owner_id: string; id: string; name: string; created_at: string; updated_at: string };
const toRow = (r: Stored): WorkspaceRow => ({ ownerId: r.owner_id, id: r.id, name: r.name, createdAt: r.created_at, updatedAt: r.updated_at });

/** Workspaces in SQLite. Every read is scoped by owner: another user's workspace reads as missing. */
export function createWorkspaceRepository(db: Database) {
  const insert = db.query("INSERT INTO workspaces (owner_id, id, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)");
  const getOne = db.query<Stored, [string, string]>("SELECT * FROM workspaces WHERE owner_id = ? AND id = ?");
  const list = db.query<Stored, [string]>("SELECT * FROM workspaces WHERE owner_id = ? ORDER BY seq");
  return {
    insert(row: WorkspaceRow): void {
      insert.run(row.ownerId, row.id, row.name, row.createdAt, row.updatedAt);
    },
    get(ownerId: string, id: string): WorkspaceRow | null {
      const r = getOne.get(ownerId, id);
      return r ? toRow(r) : null;
    },
    /** In creation order. */
    list(ownerId: string): WorkspaceRow[] {
      return list.all(ownerId).map(toRow);
    },
  };
}
export type WorkspaceRepository = ReturnType<typeof createWorkspaceRepository>;

/** What a workspace artifact row holds: a client's stored JSON. */
export type ArtifactKind = "block_index" | "vector_manifest" | "block_edges" | "notebooks";

/** Per-workspace JSON artifacts, stored as sent and returned unchanged. */
export function createArtifactRepository(db: Database) {
  const getOne = db.query<{ value: string }, [string, string, string]>(
    "SELECT value FROM workspace_artifacts WHERE owner_id = ? AND workspace_id = ? AND kind = ?",
  );
  const upsert = db.query(
    `INSERT INTO workspace_artifacts (owner_id, workspace_id, kind, value, updated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (owner_id, workspace_id, kind) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
  );
  const remove = db.query("DELETE FROM workspace_artifacts WHERE owner_id = ? AND workspace_id = ? AND kind = ?");
  return {
    /** The stored value, or undefined when none was stored. */
    get(ownerId: string, workspaceId: string, kind: ArtifactKind): unknown {
      const r = getOne.get(ownerId, workspaceId, kind);
      return r ? JSON.parse(r.value) : undefined;
    },
    put(ownerId: string, workspaceId: string, kind: ArtifactKind, value: unknown, now: string): void {
      upsert.run(ownerId, workspaceId, kind, JSON.stringify(value), now);
    },
    delete(ownerId: string, workspaceId: string, kind: ArtifactKind): void {
      remove.run(ownerId, workspaceId, kind);
    },
  };
}
export type ArtifactRepository = ReturnType<typeof createArtifactRepository>;
