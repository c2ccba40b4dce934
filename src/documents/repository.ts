import type { Database } from "bun:sqlite";

/** A block as stored in the sidecar and in the index view. */
export interface IndexedBlock {
  id: string;
  type: string;
  content: string;
  [extra: string]: unknown;
}

/** A stored document: one row whichever view (unified or legacy) wrote it. */
export interface DocumentRow {
  ownerId: string;
  workspaceId: string;
  id: string;
  documentType: string;
  title: string;
  slug: string;
  rootBlockId: string;
  notebookId: string | null;
  documentPayload: unknown;
  blocksPayload: unknown;
  markdown: string;
  metadata: Record<string, unknown>;
  indexableBlocks: IndexedBlock[];
  createdAt: string;
  updatedAt: string;
}

type Stored = {
  owner_id: string; workspace_id: string; id: string; document_type: string; title: string; slug: string; root_block_id: string;
  notebook_id: string | null; document_payload: string; blocks_payload: string; markdown: string; metadata: string;
  indexable_blocks: string; created_at: string; updated_at: string;
};
const toRow = (r: Stored): DocumentRow => ({
  ownerId: r.owner_id, workspaceId: r.workspace_id, id: r.id, documentType: r.document_type, title: r.title, slug: r.slug,
  rootBlockId: r.root_block_id, notebookId: r.notebook_id, documentPayload: JSON.parse(r.document_payload),
  blocksPayload: JSON.parse(r.blocks_payload), markdown: r.markdown, metadata: JSON.parse(r.metadata),
  indexableBlocks: JSON.parse(r.indexable_blocks), createdAt: r.created_at, updatedAt: r.updated_at,
});
const values = (d: DocumentRow) => [
  d.documentType, d.title, d.slug, d.rootBlockId, d.notebookId, JSON.stringify(d.documentPayload), JSON.stringify(d.blocksPayload),
  d.markdown, JSON.stringify(d.metadata), JSON.stringify(d.indexableBlocks), d.updatedAt,
] as const;

/** Summary columns only: listing never reads payloads. */
export type DocumentHead = Omit<DocumentRow, "documentPayload" | "blocksPayload" | "markdown" | "indexableBlocks">;
const HEAD = "owner_id, workspace_id, id, document_type, title, slug, root_block_id, notebook_id, metadata, created_at, updated_at";
const toHead = (r: Omit<Stored, "document_payload" | "blocks_payload" | "markdown" | "indexable_blocks">): DocumentHead => ({
  ownerId: r.owner_id, workspaceId: r.workspace_id, id: r.id, documentType: r.document_type, title: r.title, slug: r.slug,
  rootBlockId: r.root_block_id, notebookId: r.notebook_id, metadata: JSON.parse(r.metadata), createdAt: r.created_at, updatedAt: r.updated_at,
});

/** The document store. Every query is scoped by owner, and by workspace where a route names one. */
export function createDocumentRepository(db: Database) {
  const insert = db.query(
    `INSERT INTO documents (document_type, title, slug, root_block_id, notebook_id, document_payload, blocks_payload, markdown,
       metadata, indexable_blocks, updated_at, owner_id, workspace_id, id, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const update = db.query(
    `UPDATE documents SET document_type = ?, title = ?, slug = ?, root_block_id = ?, notebook_id = ?, document_payload = ?,
       blocks_payload = ?, markdown = ?, metadata = ?, indexable_blocks = ?, updated_at = ?
     WHERE owner_id = ? AND workspace_id = ? AND id = ?`,
  );
  const getAny = db.query<Stored, [string, string]>("SELECT * FROM documents WHERE owner_id = ? AND id = ?");
  const getIn = db.query<Stored, [string, string, string]>("SELECT * FROM documents WHERE owner_id = ? AND workspace_id = ? AND id = ?");
  const heads = db.query<Stored, [string, string]>(`SELECT ${HEAD} FROM documents WHERE owner_id = ? AND workspace_id = ? ORDER BY seq`);
  const all = db.query<Stored, [string, string]>("SELECT * FROM documents WHERE owner_id = ? AND workspace_id = ? ORDER BY seq");
  const slugs = db.query<{ slug: string }, [string, string, string, string, string]>(
    "SELECT slug FROM documents WHERE owner_id = ? AND workspace_id = ? AND (slug = ? OR slug LIKE ?) AND id <> ?",
  );
  const remove = db.query("DELETE FROM documents WHERE owner_id = ? AND workspace_id = ? AND id = ?");
  return {
    insert(row: DocumentRow): void {
      insert.run(...values(row), row.ownerId, row.workspaceId, row.id, row.createdAt);
    },
    /** Rewrites every mutable column of an existing document. */
    update(row: DocumentRow): void {
      update.run(...values(row), row.ownerId, row.workspaceId, row.id);
    },
    /** The owner's document with this id in any workspace (ids are unique per owner). */
    getAnywhere(ownerId: string, id: string): DocumentRow | null {
      const r = getAny.get(ownerId, id);
      return r ? toRow(r) : null;
    },
    get(ownerId: string, workspaceId: string, id: string): DocumentRow | null {
      const r = getIn.get(ownerId, workspaceId, id);
      return r ? toRow(r) : null;
    },
    /** Summary columns of a workspace's documents, in creation order. */
    listHeads(ownerId: string, workspaceId: string): DocumentHead[] {
      return heads.all(ownerId, workspaceId).map(toHead);
    },
    /** Whole documents of a workspace, in creation order (legacy list, reindex). */
    listFull(ownerId: string, workspaceId: string): DocumentRow[] {
      return all.all(ownerId, workspaceId).map(toRow);
    },
    /** Slugs equal to `base` or `base-…` in the workspace, other than `exceptId`'s. `base` is [a-z0-9-] only. */
    slugsLike(ownerId: string, workspaceId: string, base: string, exceptId: string): Set<string> {
      return new Set(slugs.all(ownerId, workspaceId, base, `${base}-%`, exceptId).map((r) => r.slug));
    },
    titles(ownerId: string, ids: string[]): Map<string, string> {
      const out = new Map<string, string>();
      for (let i = 0; i < ids.length; i += 500) {
        const chunk = ids.slice(i, i + 500);
        const rows = db
          .query<{ id: string; title: string }, string[]>(`SELECT id, title FROM documents WHERE owner_id = ? AND id IN (${chunk.map(() => "?").join(",")})`)
          .all(ownerId, ...chunk);
        for (const r of rows) out.set(r.id, r.title);
      }
      return out;
    },
    delete(ownerId: string, workspaceId: string, id: string): boolean {
      return remove.run(ownerId, workspaceId, id).changes > 0;
    },
  };
}
export type DocumentRepository = ReturnType<typeof createDocumentRepository>;
