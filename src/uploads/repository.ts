import { all, first, run, sql, type Executor } from "../db/store";

export interface UploadSession {
  id: string;
  ownerId: string;
  workspaceId: string;
  name: string;
  contentType: string;
  /** Bytes of the parts as sent (before sealing). */
  totalBytes: number;
  createdAt: number;
  touchedAt: number;
  /** Started in reverse-proxy mode: the parts are sealed with the owner's client key. */
  sealed: boolean;
}

export interface UploadPart {
  partNumber: number;
  blobId: string;
  size: number;
}

type Stored = {
  id: string;
  owner_id: string;
  workspace_id: string;
  name: string;
  content_type: string;
  total_bytes: number | string;
  created_at: number | string;
  touched_at: number | string;
  sealed: number | string;
};
const toSession = (r: Stored): UploadSession => ({
  id: r.id,
  ownerId: r.owner_id,
  workspaceId: r.workspace_id,
  name: r.name,
  contentType: r.content_type,
  totalBytes: Number(r.total_bytes),
  createdAt: Number(r.created_at),
  touchedAt: Number(r.touched_at),
  sealed: Number(r.sealed) === 1,
});

/** Upload sessions and their parts (each part's bytes are a blob). */
export function createUploadRepository() {
  return {
    /** Every blob id some upload part points at (the file store's orphan sweep leaves them). */
    async blobIds(tx: Executor): Promise<Set<string>> {
      const rows = await all<{ blob_id: string }>(tx, sql`SELECT DISTINCT blob_id FROM upload_parts`);
      return new Set(rows.map((row) => row.blob_id));
    },
    /** Whether some upload part points at the blob. */
    async holds(tx: Executor, blobId: string): Promise<boolean> {
      return (await first(tx, sql`SELECT 1 AS x FROM upload_parts WHERE blob_id = ${blobId} LIMIT 1`)) !== null;
    },
    async insert(tx: Executor, s: UploadSession): Promise<void> {
      await run(
        tx,
        sql`INSERT INTO upload_sessions (id, owner_id, workspace_id, name, content_type, total_bytes, created_at, touched_at, sealed)
        VALUES (${s.id}, ${s.ownerId}, ${s.workspaceId}, ${s.name}, ${s.contentType}, ${s.totalBytes}, ${s.createdAt}, ${s.touchedAt}, ${s.sealed ? 1 : 0})`,
      );
    },
    /** The session if it is this owner's; `forUpdate` locks it on PostgreSQL (parts of one upload commit one at a time). */
    async get(tx: Executor, ownerId: string, id: string, forUpdate = false): Promise<UploadSession | null> {
      const lock = forUpdate && tx.dialect === "postgres" ? sql`FOR UPDATE` : sql``;
      const row = await first<Stored>(
        tx,
        sql`SELECT id, owner_id, workspace_id, name, content_type, total_bytes, created_at, touched_at, sealed
        FROM upload_sessions WHERE id = ${id} AND owner_id = ${ownerId} ${lock}`,
      );
      return row && toSession(row);
    },
    async countOpen(tx: Executor, ownerId: string, since: number): Promise<number> {
      const row = await first<{ n: number | string }>(
        tx,
        sql`SELECT COUNT(*) AS n FROM upload_sessions WHERE owner_id = ${ownerId} AND touched_at >= ${since}`,
      );
      return Number(row?.n ?? 0);
    },
    async touch(tx: Executor, id: string, totalBytes: number, now: number): Promise<void> {
      await run(tx, sql`UPDATE upload_sessions SET total_bytes = ${totalBytes}, touched_at = ${now} WHERE id = ${id}`);
    },
    async parts(tx: Executor, id: string): Promise<UploadPart[]> {
      const rows = await all<{ part_number: number | string; blob_id: string; size: number | string }>(
        tx,
        sql`SELECT part_number, blob_id, size FROM upload_parts WHERE upload_id = ${id} ORDER BY part_number`,
      );
      return rows.map((r) => ({ partNumber: Number(r.part_number), blobId: r.blob_id, size: Number(r.size) }));
    },
    async part(tx: Executor, id: string, partNumber: number): Promise<UploadPart | null> {
      const r = await first<{ blob_id: string; size: number | string }>(
        tx,
        sql`SELECT blob_id, size FROM upload_parts WHERE upload_id = ${id} AND part_number = ${partNumber}`,
      );
      return r && { partNumber, blobId: r.blob_id, size: Number(r.size) };
    },
    async putPart(tx: Executor, id: string, part: UploadPart): Promise<void> {
      await run(
        tx,
        sql`INSERT INTO upload_parts (upload_id, part_number, blob_id, size) VALUES (${id}, ${part.partNumber}, ${part.blobId}, ${part.size})
        ON CONFLICT (upload_id, part_number) DO UPDATE SET blob_id = excluded.blob_id, size = excluded.size`,
      );
    },
    /** Marks the session as being completed; false when another request already does. */
    async claim(tx: Executor, id: string, now: number): Promise<boolean> {
      return (
        (await run(
          tx,
          sql`UPDATE upload_sessions SET completing = 1, touched_at = ${now} WHERE id = ${id} AND completing = 0`,
        )) === 1
      );
    },
    async release(tx: Executor, id: string): Promise<void> {
      await run(tx, sql`UPDATE upload_sessions SET completing = 0 WHERE id = ${id}`);
    },
    async completing(tx: Executor, id: string): Promise<boolean> {
      return (
        (await first<{ c: number | string }>(tx, sql`SELECT completing AS c FROM upload_sessions WHERE id = ${id}`))
          ?.c === 1
      );
    },
    /** Removes a session and its parts; returns the parts' blob ids (to free after commit). */
    async delete(tx: Executor, id: string): Promise<string[]> {
      const blobs = (
        await all<{ blob_id: string }>(tx, sql`SELECT blob_id FROM upload_parts WHERE upload_id = ${id}`)
      ).map((r) => r.blob_id);
      await run(tx, sql`DELETE FROM upload_parts WHERE upload_id = ${id}`);
      await run(tx, sql`DELETE FROM upload_sessions WHERE id = ${id}`);
      return blobs;
    },
    /** Deletes the open upload sessions of a workspace and their parts; the blobs the parts held. */
    async deleteWorkspace(tx: Executor, ownerId: string, workspaceId: string): Promise<string[]> {
      const ids = (
        await all<{ id: string }>(
          tx,
          sql`SELECT id FROM upload_sessions WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId}`,
        )
      ).map((r) => r.id);
      const blobs: string[] = [];
      for (const id of ids) blobs.push(...(await this.delete(tx, id)));
      return blobs;
    },
    /** Sessions idle since before `before` (anyone's), oldest first. */
    async idle(tx: Executor, before: number, limit: number): Promise<string[]> {
      return (
        await all<{ id: string }>(
          tx,
          sql`SELECT id FROM upload_sessions WHERE touched_at < ${before} ORDER BY touched_at LIMIT ${limit}`,
        )
      ).map((r) => r.id);
    },
  };
}
export type UploadRepository = ReturnType<typeof createUploadRepository>;
