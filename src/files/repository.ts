import { insertOf, type OwnedTable, type StoredColumns } from "../db/owned-tables";
import { all, first, list, run, sql, type Executor } from "../db/store";
import type { NotIndexedReason } from "./pdf-text-protocol";
import type { TextStatus } from "./text";

/** A stored file's metadata (its bytes are the blob `blobId`). */
export interface FileRow {
  seq: number;
  ownerId: string;
  workspaceId: string;
  key: string;
  name: string;
  contentType: string;
  size: number;
  sha256: string;
  blobId: string;
  createdAt: string;
  updatedAt: string;
  /** The bytes are sealed with the owner's client key (`src/crypto/file-seal.ts`); `size` and `sha256` are the sealed form's. */
  sealed: boolean;
  /** Null for files stored before text states were recorded. */
  textStatus: TextStatus | null;
  textReason: NotIndexedReason | null;
}

/** A presigned URL issued and not yet used. */
export interface FileIntent {
  key: string;
  ownerId: string;
  workspaceId: string;
  name: string;
  contentType: string;
  expiresAt: number;
  /** When the URL's upload committed; null while unused. */
  usedAt: number | null;
}

type Stored = {
  seq: number;
  owner_id: string;
  workspace_id: string;
  key: string;
  name: string;
  content_type: string;
  size: number | string;
  sha256: string;
  blob_id: string;
  created_at: string;
  updated_at: string;
  sealed: number | string;
  text_status: TextStatus | null;
  text_reason: NotIndexedReason | null;
};
/** A file as written by an upload: its text state is the extraction's to record. */
type NewFile = Omit<FileRow, "seq" | "textStatus" | "textReason">;
/** The table's columns with the row field each holds: what an upload writes and an export carries (`FILE_TABLE`). */
const FILE_COLUMNS = {
  owner_id: "ownerId",
  workspace_id: "workspaceId",
  key: "key",
  name: "name",
  content_type: "contentType",
  size: "size",
  sha256: "sha256",
  blob_id: "blobId",
  created_at: "createdAt",
  updated_at: "updatedAt",
  sealed: (file) => (file.sealed ? 1 : 0),
} as const satisfies StoredColumns<NewFile>;
/** A text block's columns: what the extraction writes and an export carries (`FILE_BLOCK_TABLE`). */
const FILE_BLOCK_COLUMNS = ["owner_id", "file_key", "position", "content"];
const COLUMNS = sql.raw(["seq", ...Object.keys(FILE_COLUMNS), "text_status", "text_reason"].join(", "));
const toRow = (r: Stored): FileRow => ({
  seq: Number(r.seq),
  ownerId: r.owner_id,
  workspaceId: r.workspace_id,
  key: r.key,
  name: r.name,
  contentType: r.content_type,
  size: Number(r.size),
  sha256: r.sha256,
  blobId: r.blob_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  sealed: Number(r.sealed) === 1,
  textStatus: r.text_status,
  textReason: r.text_reason,
});

/** Files, their text blocks and presign intents in the store of record. Every read is owner-scoped. */
export function createFileRepository() {
  return {
    async get(tx: Executor, ownerId: string, workspaceId: string, key: string): Promise<FileRow | null> {
      const row = await first<Stored>(
        tx,
        sql`SELECT ${COLUMNS} FROM files WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} AND key = ${key}`,
      );
      return row && toRow(row);
    },
    async getByKey(tx: Executor, key: string): Promise<FileRow | null> {
      const row = await first<Stored>(tx, sql`SELECT ${COLUMNS} FROM files WHERE key = ${key}`);
      return row && toRow(row);
    },
    /** A page of a workspace's files in upload order, after `afterSeq`. */
    async page(
      tx: Executor,
      ownerId: string,
      workspaceId: string,
      afterSeq: number,
      limit: number,
    ): Promise<FileRow[]> {
      const rows = await all<Stored>(
        tx,
        sql`SELECT ${COLUMNS} FROM files WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} AND seq > ${afterSeq}
                                              ORDER BY seq LIMIT ${limit}`,
      );
      return rows.map(toRow);
    },
    /** Every file of an owner (or of everyone) in seq order, a page at a time: export and backup. */
    async pageAll(tx: Executor, ownerId: string | null, afterSeq: number, limit: number): Promise<FileRow[]> {
      const owner = ownerId === null ? sql`` : sql`AND owner_id = ${ownerId}`;
      return (
        await all<Stored>(
          tx,
          sql`SELECT ${COLUMNS} FROM files WHERE seq > ${afterSeq} ${owner} ORDER BY seq LIMIT ${limit}`,
        )
      ).map(toRow);
    },
    /** Inserts a file, or replaces the bytes and type of the file with this key (a restore of the same key). */
    async upsert(tx: Executor, file: NewFile): Promise<void> {
      await run(
        tx,
        sql`INSERT INTO files ${insertOf(FILE_COLUMNS, file)}
        ON CONFLICT (key) DO UPDATE SET name = excluded.name, content_type = excluded.content_type, size = excluded.size,
          sha256 = excluded.sha256, blob_id = excluded.blob_id, updated_at = excluded.updated_at, sealed = excluded.sealed`,
      );
    },
    async delete(tx: Executor, ownerId: string, key: string): Promise<void> {
      await run(tx, sql`DELETE FROM files WHERE owner_id = ${ownerId} AND key = ${key}`);
      await run(tx, sql`DELETE FROM file_blocks WHERE owner_id = ${ownerId} AND file_key = ${key}`);
    },
    /**
     * Deletes every file of a workspace with its text blocks, and the presigned URLs issued
     * for it; the keys that went and the blobs that held their bytes.
     */
    async deleteWorkspace(
      tx: Executor,
      ownerId: string,
      workspaceId: string,
    ): Promise<Array<{ key: string; blobId: string }>> {
      const gone = await all<{ key: string; blob_id: string }>(
        tx,
        sql`DELETE FROM files WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} RETURNING key, blob_id`,
      );
      for (let i = 0; i < gone.length; i += 500) {
        await run(
          tx,
          sql`DELETE FROM file_blocks WHERE owner_id = ${ownerId} AND file_key IN ${list(gone.slice(i, i + 500).map((f) => f.key))}`,
        );
      }
      await run(tx, sql`DELETE FROM file_intents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId}`);
      return gone.map((f) => ({ key: f.key, blobId: f.blob_id }));
    },
    async countWorkspace(tx: Executor, ownerId: string, workspaceId: string): Promise<number> {
      return Number(
        (
          await first<{ n: number }>(
            tx,
            sql`SELECT COUNT(*) AS n FROM files WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId}`,
          )
        )?.n ?? 0,
      );
    },
    /** Replaces a file's text blocks (what the index is built from). */
    async setBlocks(tx: Executor, ownerId: string, key: string, blocks: string[]): Promise<void> {
      await run(tx, sql`DELETE FROM file_blocks WHERE owner_id = ${ownerId} AND file_key = ${key}`);
      for (let i = 0; i < blocks.length; i += 100) {
        // In FILE_BLOCK_COLUMNS order.
        const rows = blocks.slice(i, i + 100).map((content, j) => sql`(${ownerId}, ${key}, ${i + j}, ${content})`);
        await run(
          tx,
          sql`INSERT INTO file_blocks (${sql.raw(FILE_BLOCK_COLUMNS.join(", "))}) VALUES ${sql.join(rows)}`,
        );
      }
    },
    async blocks(tx: Executor, ownerId: string, keys: string[]): Promise<Map<string, string[]>> {
      const out = new Map<string, string[]>();
      if (!keys.length) return out;
      const rows = await all<{ file_key: string; content: string }>(
        tx,
        sql`SELECT file_key, content FROM file_blocks
        WHERE owner_id = ${ownerId} AND file_key IN (${sql.join(keys)}) ORDER BY file_key, position`,
      );
      for (const row of rows) {
        const list = out.get(row.file_key);
        if (list) list.push(row.content);
        else out.set(row.file_key, [row.content]);
      }
      return out;
    },
    /** Files among `keys` that have a row but no bytes (imported without them): their keys and SHA-256. */
    async withoutBytes(tx: Executor, ownerId: string, keys: string[]): Promise<Array<{ key: string; sha256: string }>> {
      const found: Array<{ key: string; sha256: string }> = [];
      for (let i = 0; i < keys.length; i += 500) {
        found.push(
          ...(await all<{ key: string; sha256: string }>(
            tx,
            sql`SELECT key, sha256 FROM files WHERE owner_id = ${ownerId} AND blob_id = '' AND key IN ${list(keys.slice(i, i + 500))}`,
          )),
        );
      }
      return found;
    },
    /** Points a file without bytes at `blobId`; false when it has bytes already (or is gone). */
    async attachBytes(tx: Executor, ownerId: string, key: string, blobId: string): Promise<boolean> {
      return (
        (await run(
          tx,
          sql`UPDATE files SET blob_id = ${blobId} WHERE owner_id = ${ownerId} AND key = ${key} AND blob_id = ''`,
        )) > 0
      );
    },
    async getMany(tx: Executor, ownerId: string, keys: string[]): Promise<FileRow[]> {
      if (!keys.length) return [];
      return (
        await all<Stored>(
          tx,
          sql`SELECT ${COLUMNS} FROM files WHERE owner_id = ${ownerId} AND key IN (${sql.join(keys)})`,
        )
      ).map(toRow);
    },
    async putIntent(tx: Executor, intent: Omit<FileIntent, "usedAt">): Promise<void> {
      await run(
        tx,
        sql`INSERT INTO file_intents (key, owner_id, workspace_id, name, content_type, expires_at)
        VALUES (${intent.key}, ${intent.ownerId}, ${intent.workspaceId}, ${intent.name}, ${intent.contentType}, ${intent.expiresAt})`,
      );
    },
    async intent(tx: Executor, key: string): Promise<FileIntent | null> {
      const r = await first<{
        key: string;
        owner_id: string;
        workspace_id: string;
        name: string;
        content_type: string;
        expires_at: number | string;
        used_at: number | string | null;
      }>(
        tx,
        sql`SELECT key, owner_id, workspace_id, name, content_type, expires_at, used_at FROM file_intents WHERE key = ${key}`,
      );
      return (
        r && {
          key: r.key,
          ownerId: r.owner_id,
          workspaceId: r.workspace_id,
          name: r.name,
          contentType: r.content_type,
          expiresAt: Number(r.expires_at),
          usedAt: r.used_at === null ? null : Number(r.used_at),
        }
      );
    },
    /** Marks an intent used by the upload committing in `tx`; false when it was used already (or is gone). */
    async useIntent(tx: Executor, key: string, now: number): Promise<boolean> {
      return (
        (await run(tx, sql`UPDATE file_intents SET used_at = ${now} WHERE key = ${key} AND used_at IS NULL`)) === 1
      );
    },
    /** Forgets intents whose URLs have expired. */
    async dropExpiredIntents(tx: Executor, now: number): Promise<void> {
      await run(tx, sql`DELETE FROM file_intents WHERE expires_at < ${now}`);
    },
    /** Every blob id some file points at. */
    async blobIds(tx: Executor): Promise<Set<string>> {
      const rows = await all<{ blob_id: string }>(tx, sql`SELECT DISTINCT blob_id FROM files`);
      return new Set(rows.map((row) => row.blob_id));
    },
    /** Whether some file points at the blob. */
    async holds(tx: Executor, blobId: string): Promise<boolean> {
      return (await first(tx, sql`SELECT 1 AS x FROM files WHERE blob_id = ${blobId} LIMIT 1`)) !== null;
    },
    /** Records where the text of the file `key` stands, as of its bytes `blobId`; releases any claim. */
    async setTextState(
      tx: Executor,
      key: string,
      blobId: string,
      status: TextStatus,
      reason: NotIndexedReason | null,
    ): Promise<boolean> {
      return (
        (await run(
          tx,
          sql`UPDATE files SET text_status = ${status}, text_reason = ${reason}, text_claimed_until = NULL
                                WHERE key = ${key} AND blob_id = ${blobId}`,
        )) > 0
      );
    },
    /**
     * Takes the reading of a pending file's text for this process until `until` (ms):
     * false when another process holds it, or the bytes changed since `blobId`.
     */
    async claimPendingText(tx: Executor, key: string, blobId: string, now: number, until: number): Promise<boolean> {
      return (
        (await run(
          tx,
          sql`UPDATE files SET text_claimed_until = ${until}
                                WHERE key = ${key} AND blob_id = ${blobId} AND text_status = 'pending'
                                  AND (text_claimed_until IS NULL OR text_claimed_until < ${now})`,
        )) > 0
      );
    },
    async releaseTextClaim(tx: Executor, key: string, blobId: string): Promise<void> {
      await run(tx, sql`UPDATE files SET text_claimed_until = NULL WHERE key = ${key} AND blob_id = ${blobId}`);
    },
    async *keysBySeq(tx: Executor): AsyncGenerator<{ ownerId: string; key: string }> {
      for (let after = 0; ; ) {
        const rows = await all<{ seq: number; owner_id: string; key: string }>(
          tx,
          sql`SELECT seq, owner_id, key FROM files WHERE seq > ${after} ORDER BY seq LIMIT 2000`,
        );
        for (const row of rows) yield { ownerId: row.owner_id, key: row.key };
        if (rows.length < 2000) return;
        after = Number(rows[rows.length - 1].seq);
      }
    },
  };
}
export type FileRepository = ReturnType<typeof createFileRepository>;

/** Files (their rows, not their bytes), as a user's export carries them. */
export const FILE_TABLE: OwnedTable = {
  table: "files",
  owner: "owner_id",
  columns: Object.keys(FILE_COLUMNS),
  // `sealed` came with reverse-proxy mode: older exports lack it.
  hidden: { blob_id: "" },
  defaults: { sealed: 0 },
  orderBy: "seq",
  idColumns: ["key"],
};

/** The text extracted from files (what the search index is rebuilt from), as a user's export carries it. */
export const FILE_BLOCK_TABLE: OwnedTable = {
  table: "file_blocks",
  owner: "owner_id",
  columns: FILE_BLOCK_COLUMNS,
  orderBy: "file_key, position",
  idColumns: ["file_key", "position"],
};
