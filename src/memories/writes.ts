import type { Executor } from "../db/store";
import type { Outbox } from "../search";
import type { MemoryHistoryRepository, MemorySource } from "./history-repository";
import type { MemoryProposalRepository } from "./proposals-repository";
import type { MemoryRepository, MemoryRow } from "./repository";

/** A memory to insert: everything but what the store assigns. */
export type NewMemory = Omit<MemoryRow, "seq" | "status">;

export type InsertOutcome =
  | { inserted: MemoryRow }
  /** Nothing written: `existing` is the exact duplicate already stored, null when the id itself is taken. */
  | { inserted: null; existing: MemoryRow | null };

export type UpdateOutcome =
  | { updated: MemoryRow; before: MemoryRow }
  /** `missing`: no such memory of this owner; `duplicate`: another memory of its workspace already says the new text. */
  | { updated: null; why: "missing" | "duplicate"; before: MemoryRow | null };

/**
 * The one way a memory is written, whoever writes it (the API, MCP, the CLI, extraction,
 * an accepted proposal, an import), always inside the caller's transaction: the row with
 * its exact-duplicate key, its history version and source, and the search outbox for the
 * memory and for the memories of its conversation that carry its text as context (see
 * search-source.ts: two before, one after, so a change of this one reaches the one before
 * it and the two after it). Every read and write is scoped by `ownerId`.
 */
export function createMemoryWrites({
  repo,
  history,
  outbox,
  proposals,
}: {
  repo: MemoryRepository;
  history: MemoryHistoryRepository;
  outbox: Outbox;
  proposals: MemoryProposalRepository;
}) {
  const queue = async (tx: Executor, ownerId: string, ids: Array<string | undefined>) => {
    const refs = [...new Set(ids.filter((id): id is string => !!id))].map((sourceId) => ({
      ownerId,
      kind: "memory" as const,
      sourceId,
    }));
    await outbox.enqueueMany(tx, refs, "sync");
  };
  /** The memories whose index text holds this one's as context. */
  const holdingAsContext = async (tx: Executor, row: MemoryRow) => {
    const { previous, next, later } = await repo.neighbours(tx, row);
    return [previous?.id, next?.id, later?.id];
  };

  const writes = {
    /** Inserts a memory, or finds its exact duplicate (the unique indexes decide, so concurrent writers store it once). */
    async insert(tx: Executor, row: NewMemory, source: MemorySource): Promise<InsertOutcome> {
      const inserted = await repo.insert(tx, row);
      if (!inserted)
        return { inserted: null, existing: await repo.duplicateOf(tx, row.ownerId, row.workspaceId, row.content) };
      await writes.recordInserted(tx, row.ownerId, [inserted], source);
      return { inserted };
    },

    /**
     * What follows rows just inserted (by `insert`, or in bulk by an import): each one's
     * first version, its index entry, and the previous memory of its conversation, which
     * gains it as context. How many sources were queued.
     */
    async recordInserted(
      tx: Executor,
      ownerId: string,
      rows: MemoryRow[],
      source: MemorySource,
      at?: string,
    ): Promise<number> {
      const neighbours = new Set<string>();
      for (const row of rows) {
        // The version's time: when it was stored (its `updatedAt`), unless the writer says otherwise (an import: now).
        await history.record(tx, {
          ownerId,
          memoryId: row.id,
          event: "created",
          content: null,
          metadata: row.metadata,
          workspaceId: row.workspaceId,
          at: at ?? row.updatedAt,
          source,
        });
        const { previous } = await repo.neighbours(tx, row);
        if (previous) neighbours.add(previous.id);
      }
      await outbox.enqueueMany(
        tx,
        rows.map((row) => ({ ownerId, kind: "memory" as const, sourceId: row.id })),
        "insert",
      );
      await queue(tx, ownerId, [...neighbours]);
      return rows.length + neighbours.size;
    },

    /**
     * New content and/or metadata (metadata replaces the whole object). The memory is
     * indexed again; on a content change, so are those holding it as context.
     */
    async update(
      tx: Executor,
      ownerId: string,
      id: string,
      change: { content?: string; metadata?: Record<string, unknown> },
      source: MemorySource,
    ): Promise<UpdateOutcome> {
      const before = await repo.get(tx, ownerId, id);
      if (!before) return { updated: null, why: "missing", before: null };
      const now = new Date().toISOString();
      if (change.content !== undefined) {
        if (
          !(await repo.updateContent(tx, ownerId, id, {
            content: change.content,
            metadata: change.metadata,
            updatedAt: now,
          }))
        )
          return { updated: null, why: "duplicate", before };
      } else {
        await repo.update(tx, ownerId, id, { metadata: change.metadata, updatedAt: now });
      }
      const updated = {
        ...before,
        content: change.content ?? before.content,
        metadata: change.metadata ?? before.metadata,
        updatedAt: now,
      };
      // The version before takes its own copy of the text it says; the new one reads the memory's.
      await history.keepText(tx, ownerId, id, before.content);
      await history.record(tx, {
        ownerId,
        memoryId: id,
        event: "updated",
        content: null,
        metadata: updated.metadata,
        workspaceId: updated.workspaceId,
        at: now,
        source,
      });
      await queue(tx, ownerId, [id, ...(change.content !== undefined ? await holdingAsContext(tx, updated) : [])]);
      return { updated, before };
    },

    /**
     * Deletes a memory; those holding it as context are indexed again. `erase` (a delete
     * the person asked for) removes its text from the history too, leaving one `deleted`
     * version without content, and drops the proposals about it; without it (extraction)
     * the history keeps the text, for the person to see what the model removed. Erasing a
     * memory already deleted by extraction still erases its history. False: nothing of it
     * was left to delete.
     */
    async delete(
      tx: Executor,
      ownerId: string,
      id: string,
      source: MemorySource,
      { erase }: { erase: boolean },
    ): Promise<{ deleted: MemoryRow | null } | false> {
      const row = await repo.get(tx, ownerId, id);
      const at = new Date().toISOString();
      if (!row) {
        if (!erase || !(await history.purge(tx, ownerId, id))) return false;
        await proposals.dropFor(tx, ownerId, id);
        await history.record(tx, {
          ownerId,
          memoryId: id,
          event: "deleted",
          content: "",
          metadata: {},
          workspaceId: null,
          at,
          source,
        });
        return { deleted: null };
      }
      if (erase) {
        await history.purge(tx, ownerId, id);
        await proposals.dropFor(tx, ownerId, id);
      } else await history.keepText(tx, ownerId, id, row.content);
      await history.record(tx, {
        ownerId,
        memoryId: id,
        event: "deleted",
        content: erase ? "" : row.content,
        metadata: erase ? {} : row.metadata,
        workspaceId: row.workspaceId,
        at,
        source,
      });
      const context = await holdingAsContext(tx, row);
      await repo.delete(tx, ownerId, id);
      await queue(tx, ownerId, [id, ...context]);
      return { deleted: row };
    },

    /**
     * Deletes every memory of a workspace (the workspace is deleted): the memories, every
     * version of their history and the proposals about them, so nothing of what they said
     * is kept, not even the content-free version a single delete leaves. They leave the
     * index; memories of the same conversations kept elsewhere had them as context and are
     * indexed again without it. How many memories went.
     */
    async deleteWorkspace(tx: Executor, ownerId: string, workspaceId: string): Promise<number> {
      const { ids, sessions } = await repo.deleteWorkspace(tx, ownerId, workspaceId);
      await history.purgeWorkspace(tx, ownerId, workspaceId, ids);
      await proposals.dropForWorkspace(tx, ownerId, workspaceId);
      const resync = [...ids, ...(await repo.idsInSessions(tx, ownerId, sessions))];
      if (resync.length)
        await outbox.enqueueMany(
          tx,
          resync.map((sourceId) => ({ ownerId, kind: "memory" as const, sourceId })),
          "sync",
        );
      return ids.length;
    },
  };
  return writes;
}
export type MemoryWrites = ReturnType<typeof createMemoryWrites>;
