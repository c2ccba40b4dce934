import type { MemoryRecord } from "./model";
import type { MemoryRow } from "./repository";

/** The public form of a stored memory. */
export function toMemoryRecord(row: MemoryRow): MemoryRecord {
  return {
    id: row.id,
    ownerId: row.ownerId,
    projectId: row.workspaceId ?? "default",
    content: row.content,
    metadata: row.metadata,
    status: row.status,
    workspaceId: row.workspaceId,
    session_id: row.sessionId,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
