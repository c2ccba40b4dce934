import { all, list, run, sql, type Executor } from "../db/store";
import type { MemorySource } from "./record";

export type { MemorySource } from "./record";

export type MemoryEvent = "created" | "updated" | "deleted";

export interface MemoryVersion {
  version: number;
  event: MemoryEvent;
  content: string;
  metadata: Record<string, unknown>;
  workspaceId: string | null;
  at: string;
  source: MemorySource;
}

type Stored = {
  seq: number;
  event: MemoryEvent;
  content: string;
  metadata: string;
  workspace_id: string | null;
  source: string;
  at: string;
};

/**
 * A memory's versions, oldest first: each write records the memory as it stood after it
 * (created, updated) or before it went (deleted), so an update keeps the previous
 * content in the version before. The newest version of a live memory keeps no copy of the
 * text the memory row holds (content NULL, read through the memory): before the memory's
 * text changes or goes, `keepText` gives that version its own copy. Every query is scoped
 * by owner.
 */
export function createMemoryHistoryRepository() {
  return {
    async record(
      tx: Executor,
      v: {
        ownerId: string;
        memoryId: string;
        event: MemoryEvent;
        /** null: the memory's own text, as the memory row holds it (the version is its newest). */
        content: string | null;
        metadata: Record<string, unknown>;
        workspaceId: string | null;
        at: string;
        source: MemorySource;
      },
    ): Promise<void> {
      await run(
        tx,
        sql`INSERT INTO memory_versions (owner_id, memory_id, event, content, metadata, workspace_id, source, at)
            VALUES (${v.ownerId}, ${v.memoryId}, ${v.event}, ${v.content}, ${JSON.stringify(v.metadata)}, ${v.workspaceId}, ${JSON.stringify(v.source)}, ${v.at})`,
      );
    },
    /** The memory's text (`content`, as it stands) is about to change or go: its newest version takes its own copy. */
    async keepText(tx: Executor, ownerId: string, memoryId: string, content: string): Promise<void> {
      await run(
        tx,
        sql`UPDATE memory_versions SET content = ${content}
            WHERE owner_id = ${ownerId} AND memory_id = ${memoryId} AND content IS NULL`,
      );
    },
    /** Drops every version of a memory that still holds text (its own or the memory's); whether there were any. */
    async purge(tx: Executor, ownerId: string, memoryId: string): Promise<boolean> {
      return (
        (await run(
          tx,
          sql`DELETE FROM memory_versions
              WHERE owner_id = ${ownerId} AND memory_id = ${memoryId} AND (content IS NULL OR content <> '')`,
        )) > 0
      );
    },
    /**
     * Drops every version of a workspace's memories: those carrying the workspace (memories
     * deleted earlier by extraction, their text kept for review) and those of `memoryIds`.
     */
    async purgeWorkspace(tx: Executor, ownerId: string, workspaceId: string, memoryIds: string[]): Promise<void> {
      await run(tx, sql`DELETE FROM memory_versions WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId}`);
      for (let i = 0; i < memoryIds.length; i += 500) {
        await run(
          tx,
          sql`DELETE FROM memory_versions WHERE owner_id = ${ownerId} AND memory_id IN ${list(memoryIds.slice(i, i + 500))}`,
        );
      }
    },
    /** The kinds of source of a memory's versions, oldest first (none: stored before history was kept). */
    async sourceKinds(tx: Executor, ownerId: string, memoryId: string): Promise<Array<MemorySource["kind"]>> {
      const rows = await all<{ source: string }>(
        tx,
        sql`SELECT source FROM memory_versions WHERE owner_id = ${ownerId} AND memory_id = ${memoryId} ORDER BY seq`,
      );
      return rows.map((r) => (JSON.parse(r.source) as MemorySource).kind ?? "unknown");
    },
    /** Oldest first; at most `limit` (the newest are kept when there are more). */
    async list(tx: Executor, ownerId: string, memoryId: string, limit = 1_000): Promise<MemoryVersion[]> {
      const rows = await all<Stored>(
        tx,
        sql`SELECT v.seq, v.event, COALESCE(v.content, m.content, '') AS content, v.metadata, v.workspace_id, v.source, v.at
            FROM memory_versions v LEFT JOIN memories m ON m.owner_id = v.owner_id AND m.id = v.memory_id
            WHERE v.owner_id = ${ownerId} AND v.memory_id = ${memoryId} ORDER BY v.seq DESC LIMIT ${limit}`,
      );
      return rows.reverse().map((r, i) => ({
        version: i + 1,
        event: r.event,
        content: r.content,
        metadata: JSON.parse(r.metadata),
        workspaceId: r.workspace_id,
        at: r.at,
        source: JSON.parse(r.source),
      }));
    },
  };
}
export type MemoryHistoryRepository = ReturnType<typeof createMemoryHistoryRepository>;
