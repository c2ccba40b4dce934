import type { MemoryRecord } from "./model";

/** A stored memory, as the memory repository reads it. */
export interface MemoryRow {
  seq: number;
  ownerId: string;
  id: string;
  content: string;
  metadata: Record<string, unknown>;
  workspaceId: string | null;
  sessionId: string | null;
  status: "active";
  createdAt: string;
  updatedAt: string;
}

/** Where a version of a memory came from. */
export interface MemorySource {
  /** `unknown`: stored before history was kept. */
  kind: "api" | "app" | "mcp" | "cli" | "import" | "extraction" | "unknown";
  /** The chat thread and messages it was extracted from (extraction). */
  threadId?: string | null;
  messageIds?: string[];
  /** The model that proposed it (extraction). */
  model?: string | null;
  /** Extraction the person accepted: the proposal they accepted (automatic formation does not change what a person wrote by itself). */
  proposalId?: string;
}

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
