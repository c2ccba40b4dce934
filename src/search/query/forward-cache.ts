import type { Executor } from "../../db/store";
import type { StoredForward } from "../analysis/item-terms";
import { itemKey, type TermStats } from "../indexing/term-stats";
import { partitionGroup, type PartitionGroup } from "../lance/partitions";
import type { SearchKind } from "../types";

/** Forward rows kept across all owners; past it, the least recently searched groups' go first. */
const MAX_ROWS = 200_000;

interface GroupRows {
  /** `owner\0group`: the entry is current while the map holds it under this key. */
  key: string;
  /** The group's version (term-stats-repository.ts `statistics`) the rows were read at or after. */
  version: number;
  rows: Map<string, StoredForward>;
}

/**
 * The stored forward rows of the candidates LanceDB proposed, kept in this process per
 * owner and group while the group's version stays where it was: every change to an
 * owner's items of a group moves the version on in the change's own transaction, and a
 * search reads the version with the statistics it reads anyway, so a row kept is current
 * as long as the version a search read is the one it was kept under. A search then reads
 * from the store only the rows of candidates it has not seen since the last change.
 */
export function createForwardCache(termStats: TermStats) {
  const groups = new Map<string, GroupRows>();
  let held = 0;

  /** The group's rows valid at `version` (emptied when it moved on), as the most recently used. */
  function at(ownerId: string, group: PartitionGroup, version: number): GroupRows {
    const key = `${ownerId}\u0000${group}`;
    let entry = groups.get(key);
    groups.delete(key);
    if (!entry || entry.version !== version) {
      held -= entry?.rows.size ?? 0;
      entry = { key, version, rows: new Map() };
    }
    groups.set(key, entry);
    return entry;
  }

  function evict(): void {
    for (const [key, entry] of groups) {
      if (held <= MAX_ROWS) return;
      held -= entry.rows.size;
      groups.delete(key);
    }
  }

  return {
    /**
     * The stored forward rows of these items, by `itemKey`; an item without one is gone.
     * `versions`: each group's version as this search read it.
     */
    async rows(
      db: Executor,
      ownerId: string,
      items: Array<{ kind: SearchKind; sourceId: string; itemId: string }>,
      versions: ReadonlyMap<PartitionGroup, number>,
    ): Promise<Map<string, StoredForward>> {
      const out = new Map<string, StoredForward>();
      const missing: typeof items = [];
      const entries = new Map<PartitionGroup, GroupRows>();
      for (const item of items) {
        const group = partitionGroup(item.kind);
        let entry = entries.get(group);
        if (!entry) {
          entry = at(ownerId, group, versions.get(group) ?? 0);
          entries.set(group, entry);
        }
        const key = itemKey(item);
        const row = entry.rows.get(key);
        if (row) out.set(key, row);
        else missing.push(item);
      }
      if (!missing.length) return out;
      const read = await termStats.forwardRows(db, ownerId, missing);
      for (const item of missing) {
        const key = itemKey(item);
        const row = read.get(key);
        if (!row) continue;
        out.set(key, row);
        // Read after the version this search saw: current at that version or newer, never older.
        const entry = entries.get(partitionGroup(item.kind))!;
        if (groups.get(entry.key) === entry && !entry.rows.has(key)) {
          entry.rows.set(key, row);
          held++;
        }
      }
      evict();
      return out;
    },
  };
}

export type ForwardCache = ReturnType<typeof createForwardCache>;
