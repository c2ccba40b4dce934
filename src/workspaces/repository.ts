import { insertOf, type OwnedTable, type StoredColumns } from "../db/owned-tables";
import { all, first, run, sql, type Executor } from "../db/store";

export interface WorkspaceRow {
  ownerId: string;
  id: string;
  name: string;
  createdAt: string;
  updatedAt: string;
}

/** The table's columns with the row field each holds: what the insert writes and an export carries (`WORKSPACE_TABLE`). */
const WORKSPACE_COLUMNS = {
  owner_id: "ownerId",
  id: "id",
  name: "name",
  created_at: "createdAt",
  updated_at: "updatedAt",
} as const satisfies StoredColumns<WorkspaceRow>;

type Stored = { seq: number; owner_id: string; id: string; name: string; created_at: string; updated_at: string };
const toRow = (r: Stored): WorkspaceRow => ({
  ownerId: r.owner_id,
  id: r.id,
  name: r.name,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** Workspaces in the store of record. Every read is scoped by owner: another user's workspace reads as missing. */
export function createWorkspaceRepository() {
  return {
    async insert(tx: Executor, row: WorkspaceRow): Promise<void> {
      await run(tx, sql`INSERT INTO workspaces ${insertOf(WORKSPACE_COLUMNS, row)}`);
    },
    /** Inserts the workspace unless its id is taken (by this owner or another); whether it did. */
    async insertIfAbsent(tx: Executor, row: WorkspaceRow): Promise<boolean> {
      const inserted = await all(
        tx,
        sql`INSERT INTO workspaces ${insertOf(WORKSPACE_COLUMNS, row)} ON CONFLICT DO NOTHING RETURNING id`,
      );
      return inserted.length > 0;
    },
    /** Who owns the workspace of this id (ids are unique across users), or null. */
    async ownerOf(tx: Executor, id: string): Promise<string | null> {
      return (
        (await first<{ owner_id: string }>(tx, sql`SELECT owner_id FROM workspaces WHERE id = ${id}`))?.owner_id ?? null
      );
    },
    async get(tx: Executor, ownerId: string, id: string): Promise<WorkspaceRow | null> {
      const r = await first<Stored>(tx, sql`SELECT * FROM workspaces WHERE owner_id = ${ownerId} AND id = ${id}`);
      return r ? toRow(r) : null;
    },
    /** Renames; false when the owner has no such workspace. */
    async rename(tx: Executor, ownerId: string, id: string, name: string, now: string): Promise<WorkspaceRow | null> {
      const r = await first<Stored>(
        tx,
        sql`UPDATE workspaces SET name = ${name}, updated_at = ${now} WHERE owner_id = ${ownerId} AND id = ${id} RETURNING *`,
      );
      return r ? toRow(r) : null;
    },
    /**
     * Takes the workspace row's write lock until the transaction ends (a no-op UPDATE, as
     * chats' lockThread): a second delete of it waits, then finds it gone.
     */
    async lock(tx: Executor, ownerId: string, id: string): Promise<WorkspaceRow | null> {
      const r = await first<Stored>(
        tx,
        sql`UPDATE workspaces SET updated_at = updated_at WHERE owner_id = ${ownerId} AND id = ${id} RETURNING *`,
      );
      return r ? toRow(r) : null;
    },
    async delete(tx: Executor, ownerId: string, id: string): Promise<boolean> {
      return (await run(tx, sql`DELETE FROM workspaces WHERE owner_id = ${ownerId} AND id = ${id}`)) > 0;
    },
    /** Up to `limit` workspaces created after the one of sequence `afterSeq`, in creation order. */
    async listPage(
      tx: Executor,
      ownerId: string,
      afterSeq: number,
      limit: number,
    ): Promise<Array<WorkspaceRow & { seq: number }>> {
      const rows = await all<Stored>(
        tx,
        sql`SELECT * FROM workspaces WHERE owner_id = ${ownerId} AND seq > ${afterSeq} ORDER BY seq LIMIT ${limit}`,
      );
      return rows.map((r) => ({ ...toRow(r), seq: r.seq }));
    },
  };
}
export type WorkspaceRepository = ReturnType<typeof createWorkspaceRepository>;

/** What a workspace artifact row holds: a client's stored JSON. */
export type ArtifactKind = "block_index" | "vector_manifest" | "block_edges" | "notebooks";

/** An artifact row as written: the columns the insert writes and an export carries (`ARTIFACT_TABLE`). */
interface ArtifactRow {
  ownerId: string;
  workspaceId: string;
  kind: ArtifactKind;
  value: unknown;
  updatedAt: string;
}
const ARTIFACT_COLUMNS = {
  owner_id: "ownerId",
  workspace_id: "workspaceId",
  kind: "kind",
  value: "value",
  updated_at: "updatedAt",
} as const satisfies StoredColumns<ArtifactRow>;
const ARTIFACT_JSON = ["value"];

/** Per-workspace JSON artifacts, stored as sent and returned unchanged. */
export function createArtifactRepository() {
  return {
    /** The stored value, or undefined when none was stored. */
    async get(tx: Executor, ownerId: string, workspaceId: string, kind: ArtifactKind): Promise<unknown> {
      const r = await first<{ value: string }>(
        tx,
        sql`SELECT value FROM workspace_artifacts WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} AND kind = ${kind}`,
      );
      return r ? JSON.parse(r.value) : undefined;
    },
    async put(
      tx: Executor,
      ownerId: string,
      workspaceId: string,
      kind: ArtifactKind,
      value: unknown,
      now: string,
    ): Promise<void> {
      await run(
        tx,
        sql`INSERT INTO workspace_artifacts ${insertOf(ARTIFACT_COLUMNS, { ownerId, workspaceId, kind, value, updatedAt: now }, { json: ARTIFACT_JSON })}
            ON CONFLICT (owner_id, workspace_id, kind) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      );
    },
    /** Every artifact of a workspace (its block index, manifest, edges and notebook registry); how many went. */
    async deleteWorkspace(tx: Executor, ownerId: string, workspaceId: string): Promise<number> {
      return run(
        tx,
        sql`DELETE FROM workspace_artifacts WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId}`,
      );
    },
    async delete(tx: Executor, ownerId: string, workspaceId: string, kind: ArtifactKind): Promise<void> {
      await run(
        tx,
        sql`DELETE FROM workspace_artifacts WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} AND kind = ${kind}`,
      );
    },
  };
}
export type ArtifactRepository = ReturnType<typeof createArtifactRepository>;

/** Workspaces, as a user's export carries them. */
export const WORKSPACE_TABLE: OwnedTable = {
  table: "workspaces",
  owner: "owner_id",
  columns: Object.keys(WORKSPACE_COLUMNS),
  orderBy: "seq",
  idColumns: ["id"],
};

/** Workspace artifacts (the notebook registry, stored indexes), as a user's export carries them. */
export const ARTIFACT_TABLE: OwnedTable = {
  table: "workspace_artifacts",
  owner: "owner_id",
  columns: Object.keys(ARTIFACT_COLUMNS),
  json: ARTIFACT_JSON,
  orderBy: "workspace_id, kind",
  idColumns: ["workspace_id", "kind"],
};
