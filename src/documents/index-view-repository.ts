import { insertOf, type OwnedTable, type StoredColumns } from "../db/owned-tables";
import { all, first, KEY_PAGE, ownedRowsByIds, run, sql, type Executor, type Sql } from "../db/store";
import type { IndexedDocument } from "./index-view";

/** The view's columns with the row field each holds: what a snapshot writes and an export carries (`INDEX_VIEW_TABLE`). */
const VIEW_COLUMNS = {
  owner_id: "ownerId",
  document_id: "documentId",
  workspace_id: "workspaceId",
  document_type: "documentType",
  title: "title",
  root_block_id: "rootBlockId",
  metadata: "metadata",
  blocks: "blocks",
  created_at: "createdAt",
  indexed_at: "indexedAt",
} as const satisfies StoredColumns<IndexedDocument>;
const VIEW_JSON = ["metadata", "blocks"];

type Stored = {
  owner_id: string;
  document_id: string;
  workspace_id: string;
  document_type: string;
  title: string;
  root_block_id: string | null;
  metadata: string;
  blocks: string;
  created_at: string;
  indexed_at: string;
};
const toRow = (r: Stored): IndexedDocument => ({
  ownerId: r.owner_id,
  documentId: r.document_id,
  workspaceId: r.workspace_id,
  documentType: r.document_type,
  title: r.title,
  rootBlockId: r.root_block_id,
  metadata: JSON.parse(r.metadata),
  blocks: JSON.parse(r.blocks),
  createdAt: r.created_at,
  indexedAt: r.indexed_at,
});

/** Where a page of a workspace's view entries starts: after this (created_at, document_id). */
export interface ViewPosition {
  createdAt: string;
  documentId: string;
}

type StoredKey = { owner_id: string; document_id: string };

/**
 * The derived-index view (`indexed_documents`): what the `block` search source serves.
 * Only unified writes, `reindex` and `index/clear` change it; legacy writes never do.
 */
export function createIndexViewRepository() {
  return {
    /** Puts a snapshot; true when the document had none before (an `insert` for the outbox). */
    async put(tx: Executor, row: IndexedDocument): Promise<boolean> {
      const existed =
        (await first(
          tx,
          sql`SELECT 1 AS one FROM indexed_documents WHERE owner_id = ${row.ownerId} AND document_id = ${row.documentId}`,
        )) !== null;
      await run(
        tx,
        sql`INSERT INTO indexed_documents ${insertOf(VIEW_COLUMNS, row, { json: VIEW_JSON })}
            ON CONFLICT (owner_id, document_id) DO UPDATE SET workspace_id = excluded.workspace_id, document_type = excluded.document_type,
              title = excluded.title, root_block_id = excluded.root_block_id, metadata = excluded.metadata, blocks = excluded.blocks,
              indexed_at = excluded.indexed_at`,
      );
      return !existed;
    },
    async delete(tx: Executor, ownerId: string, documentId: string): Promise<boolean> {
      return (
        (await run(
          tx,
          sql`DELETE FROM indexed_documents WHERE owner_id = ${ownerId} AND document_id = ${documentId}`,
        )) > 0
      );
    },
    /** Deletes a workspace's entries (a legacy delete may have left some whose document is gone); their document ids. */
    async deleteWorkspace(tx: Executor, ownerId: string, workspaceId: string): Promise<string[]> {
      return (
        await all<{ document_id: string }>(
          tx,
          sql`DELETE FROM indexed_documents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} RETURNING document_id`,
        )
      ).map((r) => r.document_id);
    },
    /** Every entry of a workspace (edge derivation), in creation order. */
    async listByWorkspace(tx: Executor, ownerId: string, workspaceId: string): Promise<IndexedDocument[]> {
      const rows = await all<Stored>(
        tx,
        sql`SELECT * FROM indexed_documents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} ORDER BY created_at, document_id`,
      );
      return rows.map(toRow);
    },
    /** Up to `limit` entries of a workspace after `after`, in creation order (index/raw pages). */
    async pageByWorkspace(
      tx: Executor,
      ownerId: string,
      workspaceId: string,
      after: ViewPosition | null,
      limit: number,
    ): Promise<IndexedDocument[]> {
      const from = after ? sql`AND (created_at, document_id) > (${after.createdAt}, ${after.documentId})` : sql``;
      const rows = await all<Stored>(
        tx,
        sql`SELECT * FROM indexed_documents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} ${from}
            ORDER BY created_at, document_id LIMIT ${limit}`,
      );
      return rows.map(toRow);
    },
    /** Up to `limit` document ids of a workspace's entries after `afterId`, in id order (clear and reindex go in batches). */
    async idsByWorkspace(
      tx: Executor,
      ownerId: string,
      workspaceId: string,
      afterId: string | null,
      limit: number,
    ): Promise<string[]> {
      const from = afterId === null ? sql`` : sql`AND document_id > ${afterId}`;
      const rows = await all<{ document_id: string }>(
        tx,
        sql`SELECT document_id FROM indexed_documents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} ${from}
            ORDER BY document_id LIMIT ${limit}`,
      );
      return rows.map((r) => r.document_id);
    },
    async getMany(tx: Executor, ownerId: string, ids: string[]): Promise<Map<string, IndexedDocument>> {
      const rows = await ownedRowsByIds<Stored>(tx, "indexed_documents", ownerId, ids, { idColumn: "document_id" });
      return new Map(rows.map((r) => [r.document_id, toRow(r)]));
    },
    /** Every (owner, document) in the view for an index rebuild, in primary-key pages (no long-lived cursor or transaction). */
    async *allKeys(tx: Executor): AsyncIterable<{ ownerId: string; documentId: string }> {
      let after: { ownerId: string; documentId: string } | null = null;
      for (;;) {
        const from: Sql = after ? sql`WHERE (owner_id, document_id) > (${after.ownerId}, ${after.documentId})` : sql``;
        const page: StoredKey[] = await all<StoredKey>(
          tx,
          sql`SELECT owner_id, document_id FROM indexed_documents ${from} ORDER BY owner_id, document_id LIMIT ${KEY_PAGE}`,
        );
        for (const r of page) yield { ownerId: r.owner_id, documentId: r.document_id };
        if (page.length < KEY_PAGE) return;
        const last = page[page.length - 1];
        after = { ownerId: last.owner_id, documentId: last.document_id };
      }
    },
  };
}
export type IndexViewRepository = ReturnType<typeof createIndexViewRepository>;

/** The index view of documents, as a user's export carries it. */
export const INDEX_VIEW_TABLE: OwnedTable = {
  table: "indexed_documents",
  owner: "owner_id",
  columns: Object.keys(VIEW_COLUMNS),
  json: VIEW_JSON,
  orderBy: "document_id",
  idColumns: ["document_id"],
};
