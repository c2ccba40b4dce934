import { insertOf, type OwnedTable, type StoredColumns } from "../db/owned-tables";
import { all, first, ownedRowsByIds, run, sql, type Executor, type Sql } from "../db/store";
import type { DocumentRow } from "./record";

export type { DocumentRow, IndexedBlock } from "./record";

type Stored = {
  owner_id: string;
  workspace_id: string;
  id: string;
  document_type: string;
  title: string;
  slug: string;
  root_block_id: string;
  notebook_id: string | null;
  document_payload: string;
  blocks_payload: string;
  markdown: string;
  metadata: string;
  indexable_blocks: string;
  created_at: string;
  updated_at: string;
};
const toRow = (r: Stored): DocumentRow => ({
  ownerId: r.owner_id,
  workspaceId: r.workspace_id,
  id: r.id,
  documentType: r.document_type,
  title: r.title,
  slug: r.slug,
  rootBlockId: r.root_block_id,
  notebookId: r.notebook_id,
  documentPayload: JSON.parse(r.document_payload),
  blocksPayload: JSON.parse(r.blocks_payload),
  markdown: r.markdown,
  metadata: JSON.parse(r.metadata),
  indexableBlocks: JSON.parse(r.indexable_blocks),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});
const mutableColumns = (
  d: DocumentRow,
) => sql`document_type = ${d.documentType}, title = ${d.title}, slug = ${d.slug}, root_block_id = ${d.rootBlockId},
  notebook_id = ${d.notebookId}, document_payload = ${JSON.stringify(d.documentPayload)}, blocks_payload = ${JSON.stringify(d.blocksPayload)},
  markdown = ${d.markdown}, metadata = ${JSON.stringify(d.metadata)}, indexable_blocks = ${JSON.stringify(d.indexableBlocks)}, updated_at = ${d.updatedAt}`;

/** The table's columns with the row field each holds: what the insert writes and an export carries (`DOCUMENT_TABLE`). */
const DOCUMENT_COLUMNS = {
  owner_id: "ownerId",
  workspace_id: "workspaceId",
  id: "id",
  document_type: "documentType",
  title: "title",
  slug: "slug",
  root_block_id: "rootBlockId",
  notebook_id: "notebookId",
  document_payload: "documentPayload",
  blocks_payload: "blocksPayload",
  markdown: "markdown",
  metadata: "metadata",
  indexable_blocks: "indexableBlocks",
  created_at: "createdAt",
  updated_at: "updatedAt",
} as const satisfies StoredColumns<DocumentRow>;
const DOCUMENT_JSON = ["document_payload", "blocks_payload", "metadata", "indexable_blocks"];

/** Summary columns only: listing never reads payloads. */
export type DocumentHead = Omit<DocumentRow, "documentPayload" | "blocksPayload" | "markdown" | "indexableBlocks">;
const HEAD = sql.raw(
  "owner_id, workspace_id, id, document_type, title, slug, root_block_id, notebook_id, metadata, created_at, updated_at",
);
type StoredHead = Omit<Stored, "document_payload" | "blocks_payload" | "markdown" | "indexable_blocks">;
const toHead = (r: StoredHead): DocumentHead => ({
  ownerId: r.owner_id,
  workspaceId: r.workspace_id,
  id: r.id,
  documentType: r.document_type,
  title: r.title,
  slug: r.slug,
  rootBlockId: r.root_block_id,
  notebookId: r.notebook_id,
  metadata: JSON.parse(r.metadata),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** What a reindex reads of a document: everything the index view takes, no payloads. */
export type IndexSource = Pick<
  DocumentRow,
  | "ownerId"
  | "workspaceId"
  | "id"
  | "documentType"
  | "title"
  | "rootBlockId"
  | "metadata"
  | "markdown"
  | "indexableBlocks"
  | "createdAt"
> & { seq: number };
const INDEX_SOURCE = sql.raw(
  "seq, owner_id, workspace_id, id, document_type, title, root_block_id, metadata, markdown, indexable_blocks, created_at",
);
type StoredIndexSource = Pick<
  Stored,
  | "owner_id"
  | "workspace_id"
  | "id"
  | "document_type"
  | "title"
  | "root_block_id"
  | "metadata"
  | "markdown"
  | "indexable_blocks"
  | "created_at"
>;
const toIndexSource = (r: StoredIndexSource & { seq: number }): IndexSource => ({
  seq: r.seq,
  ownerId: r.owner_id,
  workspaceId: r.workspace_id,
  id: r.id,
  documentType: r.document_type,
  title: r.title,
  rootBlockId: r.root_block_id,
  metadata: JSON.parse(r.metadata),
  markdown: r.markdown,
  indexableBlocks: JSON.parse(r.indexable_blocks),
  createdAt: r.created_at,
});
const FULL_SIZE = sql.raw(
  "LENGTH(document_payload) + LENGTH(blocks_payload) + LENGTH(markdown) + LENGTH(metadata) + LENGTH(indexable_blocks)",
);
const INDEX_SOURCE_SIZE = sql.raw("LENGTH(markdown) + LENGTH(metadata) + LENGTH(indexable_blocks)");

/**
 * Rows of a workspace after `afterSeq`, in creation order: at most `limit`, and only as
 * many as fit in `maxBytes` by `size` (at least one). The sizes are read first, so large
 * rows beyond the budget are never loaded.
 */
async function boundedPage<R>(
  tx: Executor,
  ownerId: string,
  workspaceId: string,
  afterSeq: number,
  limit: number,
  maxBytes: number,
  size: Sql,
  columns: Sql,
): Promise<{ rows: Array<R & { seq: number }>; more: boolean }> {
  const sizes = await all<{ seq: number; size: number }>(
    tx,
    sql`SELECT seq, ${size} AS size FROM documents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} AND seq > ${afterSeq}
        ORDER BY seq LIMIT ${limit + 1}`,
  );
  let count = 0;
  for (let total = 0; count < Math.min(limit, sizes.length); count++) {
    total += Number(sizes[count].size);
    if (count > 0 && total > maxBytes) break;
  }
  if (count === 0) return { rows: [], more: false };
  const rows = await all<R & { seq: number }>(
    tx,
    sql`SELECT ${columns} FROM documents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId}
        AND seq > ${afterSeq} AND seq <= ${sizes[count - 1].seq} ORDER BY seq`,
  );
  return { rows, more: sizes.length > count };
}

/** The document store. Every query is scoped by owner, and by workspace where a route names one. */
export function createDocumentRepository() {
  return {
    /** Inserts; false when the owner's id or the workspace's slug is taken (nothing was written). */
    async insert(tx: Executor, d: DocumentRow): Promise<boolean> {
      const inserted = await first(
        tx,
        sql`INSERT INTO documents ${insertOf(DOCUMENT_COLUMNS, d, { json: DOCUMENT_JSON })} ON CONFLICT DO NOTHING RETURNING seq`,
      );
      return inserted !== null;
    },
    /** Rewrites every mutable column of an existing document. */
    async update(tx: Executor, row: DocumentRow): Promise<void> {
      await run(
        tx,
        sql`UPDATE documents SET ${mutableColumns(row)} WHERE owner_id = ${row.ownerId} AND workspace_id = ${row.workspaceId} AND id = ${row.id}`,
      );
    },
    /** The owner's document with this id in any workspace (ids are unique per owner). */
    async getAnywhere(tx: Executor, ownerId: string, id: string): Promise<DocumentRow | null> {
      const r = await first<Stored>(tx, sql`SELECT * FROM documents WHERE owner_id = ${ownerId} AND id = ${id}`);
      return r ? toRow(r) : null;
    },
    async get(tx: Executor, ownerId: string, workspaceId: string, id: string): Promise<DocumentRow | null> {
      const r = await first<Stored>(
        tx,
        sql`SELECT * FROM documents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} AND id = ${id}`,
      );
      return r ? toRow(r) : null;
    },
    /** Summary columns of up to `limit` documents of a workspace after sequence `afterSeq` (of one notebook when given), in creation order. */
    async listHeadsPage(
      tx: Executor,
      ownerId: string,
      workspaceId: string,
      notebookId: string | undefined,
      afterSeq: number,
      limit: number,
    ): Promise<Array<DocumentHead & { seq: number }>> {
      const notebook = notebookId === undefined ? sql`` : sql`AND notebook_id = ${notebookId}`;
      const rows = await all<StoredHead & { seq: number }>(
        tx,
        sql`SELECT seq, ${HEAD} FROM documents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} AND seq > ${afterSeq} ${notebook}
            ORDER BY seq LIMIT ${limit}`,
      );
      return rows.map((r) => ({ ...toHead(r), seq: r.seq }));
    },
    /**
     * Whole documents of a workspace after sequence `afterSeq`, in creation order: at most
     * `limit`, and no more than fit in `maxBytes` of stored content (at least one), so a
     * page of large payloads stays bounded. `more` says whether documents remain.
     */
    async listFullPage(
      tx: Executor,
      ownerId: string,
      workspaceId: string,
      afterSeq: number,
      limit: number,
      maxBytes: number,
    ) {
      const page = await boundedPage<Stored>(
        tx,
        ownerId,
        workspaceId,
        afterSeq,
        limit,
        maxBytes,
        FULL_SIZE,
        sql.raw("*"),
      );
      return { rows: page.rows.map((r) => ({ ...toRow(r), seq: r.seq })), more: page.more };
    },
    /** What the index view needs of a workspace's documents (no payloads), a page at a time as `listFullPage` (reindex batches). */
    async listIndexSourcesPage(
      tx: Executor,
      ownerId: string,
      workspaceId: string,
      afterSeq: number,
      limit: number,
      maxBytes: number,
    ) {
      const page = await boundedPage<StoredIndexSource>(
        tx,
        ownerId,
        workspaceId,
        afterSeq,
        limit,
        maxBytes,
        INDEX_SOURCE_SIZE,
        INDEX_SOURCE,
      );
      return { rows: page.rows.map(toIndexSource), more: page.more };
    },
    /** Which of `ids` are stored documents of the owner. */
    async existing(tx: Executor, ownerId: string, ids: string[]): Promise<Set<string>> {
      return new Set(
        (await ownedRowsByIds<{ id: string }>(tx, "documents", ownerId, ids, { columns: "id" })).map((r) => r.id),
      );
    },
    /**
     * Slugs equal to `base` or `base-…` in the workspace, other than `exceptId`'s. `base` is [a-z0-9-] only
     * (no LIKE wildcards), and slugs are lowercase, so the match is the same on both engines.
     */
    async slugsLike(
      tx: Executor,
      ownerId: string,
      workspaceId: string,
      base: string,
      exceptId: string,
    ): Promise<Set<string>> {
      const rows = await all<{ slug: string }>(
        tx,
        sql`SELECT slug FROM documents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId}
              AND (slug = ${base} OR slug LIKE ${`${base}-%`}) AND id <> ${exceptId}`,
      );
      return new Set(rows.map((r) => r.slug));
    },
    /** The id and slug of every document of a workspace. */
    async idsAndSlugs(
      tx: Executor,
      ownerId: string,
      workspaceId: string,
    ): Promise<Array<{ id: string; slug: string }>> {
      return all<{ id: string; slug: string }>(
        tx,
        sql`SELECT id, slug FROM documents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId}`,
      );
    },
    async titles(tx: Executor, ownerId: string, ids: string[]): Promise<Map<string, string>> {
      const rows = await ownedRowsByIds<{ id: string; title: string }>(tx, "documents", ownerId, ids, {
        columns: "id, title",
      });
      return new Map(rows.map((r) => [r.id, r.title]));
    },
    /** Deletes every document of a workspace; their ids. */
    async deleteWorkspace(tx: Executor, ownerId: string, workspaceId: string): Promise<string[]> {
      return (
        await all<{ id: string }>(
          tx,
          sql`DELETE FROM documents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} RETURNING id`,
        )
      ).map((r) => r.id);
    },
    async countWorkspace(tx: Executor, ownerId: string, workspaceId: string): Promise<number> {
      return Number(
        (
          await first<{ n: number }>(
            tx,
            sql`SELECT COUNT(*) AS n FROM documents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId}`,
          )
        )?.n ?? 0,
      );
    },
    async delete(tx: Executor, ownerId: string, workspaceId: string, id: string): Promise<boolean> {
      return (
        (await run(
          tx,
          sql`DELETE FROM documents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} AND id = ${id}`,
        )) > 0
      );
    },
  };
}
export type DocumentRepository = ReturnType<typeof createDocumentRepository>;

/** Documents, as a user's export carries them. */
export const DOCUMENT_TABLE: OwnedTable = {
  table: "documents",
  owner: "owner_id",
  columns: Object.keys(DOCUMENT_COLUMNS),
  json: DOCUMENT_JSON,
  orderBy: "seq",
  idColumns: ["id"],
};
