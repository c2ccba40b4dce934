import type { Executor } from "../db/store";
import { newId } from "../lib/ids";
import type { Outbox } from "../search";
import type { MemoryHistoryRepository, MemorySource } from "./history-repository";
import type { MemoryRepository, MemoryRow } from "./repository";

/** One change to a user's memories, as memory formation decides it. */
export type MemoryOperation =
  | { action: "add"; content: string; workspaceId: string | null; sessionId: string | null; createdAt?: string }
  | { action: "update"; id: string; content: string }
  | { action: "delete"; id: string };

/** What came of an operation: `none` when it changed nothing (a duplicate, a memory gone meanwhile). */
export interface OperationOutcome {
  action: "add" | "update" | "delete" | "none";
  memoryId: string | null;
  content: string | null;
  previous: string | null;
  reason?: "duplicate" | "missing" | "model" | "missing_decision";
}

/**
 * Memory writes inside a transaction the caller holds, each recording its version and
 * source and queueing the search index: what memory formation applies all at once.
 * Every read and write is scoped by `ownerId`.
 */
export function createMemoryOperations({ repo, history, outbox }: { repo: MemoryRepository; history: MemoryHistoryRepository; outbox: Outbox }) {
  const reindex = async (tx: Executor, ownerId: string, ids: Array<string | undefined>) => {
    for (const id of ids) if (id) await outbox.enqueue(tx, { ownerId, kind: "memory", sourceId: id }, "sync");
  };
  const version = (row: MemoryRow, event: "created" | "updated" | "deleted", content: string, at: string, source: MemorySource) => ({
    ownerId: row.ownerId, memoryId: row.id, event, content, metadata: row.metadata, workspaceId: row.workspaceId, at, source,
  });

  return {
    async apply(tx: Executor, ownerId: string, op: MemoryOperation, source: MemorySource): Promise<OperationOutcome> {
      const now = new Date().toISOString();
      if (op.action === "add") {
        const createdAt = op.createdAt ?? now;
        // `metadata.source` says where it came from where the app shows it, and is a search filter (`filters: {source: "extraction"}`).
        const row = { ownerId, id: newId("mem"), content: op.content, metadata: { source: source.kind }, workspaceId: op.workspaceId, sessionId: op.sessionId, createdAt, updatedAt: now };
        const inserted = await repo.insert(tx, row);
        if (!inserted) {
          const existing = await repo.duplicateOf(tx, ownerId, op.workspaceId, op.content);
          return { action: "none", memoryId: existing?.id ?? null, content: existing?.content ?? null, previous: null, reason: "duplicate" };
        }
        await history.record(tx, version(inserted, "created", op.content, now, source));
        await outbox.enqueue(tx, { ownerId, kind: "memory", sourceId: row.id }, "insert");
        const { previous } = await repo.neighbours(tx, inserted);
        await reindex(tx, ownerId, [previous?.id]);
        return { action: "add", memoryId: row.id, content: op.content, previous: null };
      }
      const row = await repo.get(tx, ownerId, op.id);
      if (!row) return { action: "none", memoryId: op.id, content: null, previous: null, reason: "missing" };
      if (op.action === "update") {
        if (!(await repo.updateContent(tx, ownerId, op.id, { content: op.content, updatedAt: now }))) {
          // Another memory of the workspace already says this: nothing to change.
          return { action: "none", memoryId: op.id, content: row.content, previous: null, reason: "duplicate" };
        }
        await history.record(tx, version(row, "updated", op.content, now, source));
        await reindex(tx, ownerId, [op.id]);
        return { action: "update", memoryId: op.id, content: op.content, previous: row.content };
      }
      const { previous, next, later } = await repo.neighbours(tx, row);
      await history.record(tx, version(row, "deleted", row.content, now, source));
      await repo.delete(tx, ownerId, op.id);
      await reindex(tx, ownerId, [op.id, previous?.id, next?.id, later?.id]);
      return { action: "delete", memoryId: op.id, content: null, previous: row.content };
    },
  };
}
export type MemoryOperations = ReturnType<typeof createMemoryOperations>;
