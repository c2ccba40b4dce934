import type { Database } from "bun:sqlite";
import { selectOwnedByIds } from "../db/select-in";
import type { IndexedBlock } from "./repository";

/** One document as the derived index sees it: a snapshot taken by a unified write or a reindex. */
export interface IndexedDocument {
  ownerId: string;
  documentId: string;
  workspaceId: string;
  documentType: string;
  title: string;
  metadata: Record<string, unknown>;
  blocks: IndexedBlock[];
  createdAt: string;
  indexedAt: string;
}

type Stored = {
  owner_id: string; document_id: string; workspace_id: string; document_type: string; title: string; metadata: string;
  blocks: string; created_at: string; indexed_at: string;
};
const toRow = (r: Stored): IndexedDocument => ({
  ownerId: r.owner_id, documentId: r.document_id, workspaceId: r.workspace_id, documentType: r.document_type, title: r.title,
  metadata: JSON.parse(r.metadata), blocks: JSON.parse(r.blocks), createdAt: r.created_at, indexedAt: r.indexed_at,
});

/**
 * The derived-index view (`indexed_documents`): what the `block` search source serves.
 * Only unified writes, `reindex` and `index/clear` change it; legacy writes never do.
 */
export function createIndexViewRepository(db: Database) {
  const upsert = db.query(
    `INSERT INTO indexed_documents (owner_id, document_id, workspace_id, document_type, title, metadata, blocks, created_at, indexed_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (owner_id, document_id) DO UPDATE SET workspace_id = excluded.workspace_id, document_type = excluded.document_type,
       title = excluded.title, metadata = excluded.metadata, blocks = excluded.blocks, indexed_at = excluded.indexed_at`,
  );
  const getOne = db.query<Stored, [string, string]>("SELECT * FROM indexed_documents WHERE owner_id = ? AND document_id = ?");
  const byWorkspace = db.query<Stored, [string, string]>(
    "SELECT * FROM indexed_documents WHERE owner_id = ? AND workspace_id = ? ORDER BY created_at, document_id",
  );
  const remove = db.query("DELETE FROM indexed_documents WHERE owner_id = ? AND document_id = ?");
  return {
    /** Puts a snapshot; true when the document had none before (an `insert` for the outbox). */
    put(row: IndexedDocument): boolean {
      const existed = getOne.get(row.ownerId, row.documentId) !== null;
      upsert.run(row.ownerId, row.documentId, row.workspaceId, row.documentType, row.title, JSON.stringify(row.metadata),
        JSON.stringify(row.blocks), row.createdAt, row.indexedAt);
      return !existed;
    },
    delete(ownerId: string, documentId: string): boolean {
      return remove.run(ownerId, documentId).changes > 0;
    },
    listByWorkspace(ownerId: string, workspaceId: string): IndexedDocument[] {
      return byWorkspace.all(ownerId, workspaceId).map(toRow);
    },
    getMany(ownerId: string, ids: string[]): Map<string, IndexedDocument> {
      return new Map(selectOwnedByIds<Stored>(db, "indexed_documents", "document_id", ownerId, ids).map((r) => [r.document_id, toRow(r)]));
    },
    /** Every (owner, document) in the view, for an index rebuild. */
    *allKeys(): Iterable<{ ownerId: string; documentId: string }> {
      for (const r of db.query<{ owner_id: string; document_id: string }, []>("SELECT owner_id, document_id FROM indexed_documents").iterate()) {
        yield { ownerId: r.owner_id, documentId: r.document_id };
      }
    },
  };
}
export type IndexViewRepository = ReturnType<typeof createIndexViewRepository>;
