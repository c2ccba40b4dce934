import type { Executor } from "../db/store";
import { groupByOwner, sourceKey, type SearchItem, type SearchSource, type SourceRef } from "../search";
import type { MemoryRepository, MemoryRow } from "./repository";

/**
 * Feeds memories to the search index: one item per memory, its content as text and
 * the neighbouring memories of the same conversation as lower-weighted context (a
 * reply such as "Yes, last Tuesday" is found by the question it answers): the two
 * memories before it and the one after it. The memory write (writes.ts) queues the mirror
 * of this, the one before and the two after a changed memory, and must change with it.
 */
export function memorySearchSource(repo: MemoryRepository): SearchSource<MemoryRow, "memory"> {
  return {
    kind: "memory",
    async load(tx: Executor, refs: SourceRef[], { context = true } = {}) {
      const out = new Map<string, SearchItem<MemoryRow>[]>();
      for (const [ownerId, ids] of groupByOwner(refs)) {
        for (const row of (await repo.getMany(tx, ownerId, ids)).values()) {
          const ref = { ownerId, kind: "memory" as const, sourceId: row.id };
          const { previous, earlier, next } = context
            ? await repo.neighbours(tx, row)
            : { previous: null, earlier: null, next: null };
          out.set(sourceKey(ref), [
            {
              ...ref,
              itemId: row.id,
              workspaceId: row.workspaceId,
              sessionId: row.sessionId,
              documentType: null,
              metadata: row.metadata,
              createdAtMs: Date.parse(row.createdAt),
              text: row.content,
              contextBefore: [earlier?.content, previous?.content].filter(Boolean).join("\n"),
              contextAfter: next?.content ?? "",
              record: row,
            },
          ]);
        }
      }
      return out;
    },
    async *listAll(tx: Executor) {
      for await (const key of repo.allKeys(tx))
        yield { ownerId: key.ownerId, kind: "memory" as const, sourceId: key.id };
    },
  };
}
