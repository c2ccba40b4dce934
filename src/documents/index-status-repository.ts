import { first, sql, type Executor, type Sql } from "../db/store";

/** How a workspace's stored documents and its index view line up. */
export interface ViewCounts {
  documents: number;
  indexedDocuments: number;
  unindexedDocuments: number;
  staleDocuments: number;
  outdatedDocuments: number;
  lastIndexedAt: string | null;
}

// Aliases are snake_case: PostgreSQL folds unquoted identifiers to lower case.
type StoredCounts = {
  documents: number;
  indexed_documents: number;
  unindexed_documents: number;
  stale_documents: number;
  outdated_documents: number;
  last_indexed_at: string | null;
};

/** A workspace's documents against its index view entries (the derived index's status), in one statement. */
export async function workspaceViewCounts(tx: Executor, ownerId: string, workspaceId: string): Promise<ViewCounts> {
  const r = (await first<StoredCounts>(
    tx,
    sql`SELECT
      (SELECT COUNT(*) FROM documents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId}) AS documents,
      (SELECT COUNT(*) FROM indexed_documents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId}) AS indexed_documents,
      (SELECT COUNT(*) FROM documents d WHERE d.owner_id = ${ownerId} AND d.workspace_id = ${workspaceId}
         AND NOT EXISTS (SELECT 1 FROM indexed_documents v WHERE v.owner_id = d.owner_id AND v.document_id = d.id)) AS unindexed_documents,
      (SELECT COUNT(*) FROM indexed_documents v WHERE v.owner_id = ${ownerId} AND v.workspace_id = ${workspaceId}
         AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.owner_id = v.owner_id AND d.id = v.document_id)) AS stale_documents,
      (SELECT COUNT(*) FROM indexed_documents v JOIN documents d ON d.owner_id = v.owner_id AND d.id = v.document_id
         WHERE v.owner_id = ${ownerId} AND v.workspace_id = ${workspaceId} AND d.updated_at > v.indexed_at) AS outdated_documents,
      (SELECT MAX(indexed_at) FROM indexed_documents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId}) AS last_indexed_at`,
  ))!;
  return {
    documents: r.documents,
    indexedDocuments: r.indexed_documents,
    unindexedDocuments: r.unindexed_documents,
    staleDocuments: r.stale_documents,
    outdatedDocuments: r.outdated_documents,
    lastIndexedAt: r.last_indexed_at,
  };
}

/**
 * A condition on `column` (a `block` source id): it names a document of the workspace or an
 * entry of its index view. A part of another statement, so that the derived index counts a
 * workspace's pending outbox rows in one statement.
 */
export function workspaceBlockSources(column: Sql, ownerId: string, workspaceId: string): Sql {
  return sql`(${column} IN (SELECT id FROM documents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId})
    OR ${column} IN (SELECT document_id FROM indexed_documents WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId}))`;
}
