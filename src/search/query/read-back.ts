import type { Executor } from "../../db/store";
import { itemKey } from "../indexing/term-stats";
import { loadSourceItems, type AnyItem, type SearchSources, type SourceRef } from "../types";
import { contenders, type RankedHit } from "./ranking";

/** Candidates read back beyond the gap when hits were dropped by the store read-back (deleted since indexed). */
const VERIFY_SPARE = 5;

/** Whether a hit's current item still belongs in the search. */
type Accepts = (hit: RankedHit, item: AnyItem) => boolean;

/** A ranked hit as read back from the store of record: the current text, workspace, time and row. */
export type ReadHit = RankedHit & { text: string; workspaceId: string | null; createdAtMs: number; record: unknown };

/**
 * Reads hits back from the store of record through their sources, so that a deleted or
 * changed source is never answered from the index with its old text; `accepts` says
 * whether the current item still belongs in the search (its filters, when they were not
 * checked on the current row).
 */
export function createReadBack(db: Executor, sources: SearchSources) {
  /**
   * Reads each hit's item back, for this owner: the text, workspace and time answered are
   * the current ones, and a hit whose item was deleted since it was indexed is dropped.
   */
  async function hydrate(ownerId: string, hits: RankedHit[], accepts: Accepts): Promise<ReadHit[]> {
    const current = new Map<string, AnyItem>();
    const refs: SourceRef[] = hits.map((hit) => ({ ownerId, kind: hit.kind, sourceId: hit.sourceId }));
    for (const item of await loadSourceItems(db, sources, refs, { context: false })) current.set(itemKey(item), item);
    return hits.flatMap((hit) => {
      const item = current.get(hit.key);
      return item && accepts(hit, item)
        ? [
            {
              ...hit,
              text: item.text,
              workspaceId: item.workspaceId,
              createdAtMs: item.createdAtMs,
              record: item.record,
            },
          ]
        : [];
    });
  }

  /**
   * The hits of a fused list read back from the store: the first `limit` (and every one
   * tied with the last), then, while some were gone (deleted since they were indexed), the
   * next candidates to fill the gap (twice as many each round). Reading spares up front
   * cost every search a third more rows for a case that is rare.
   */
  return async function readBack(
    ownerId: string,
    fused: RankedHit[],
    limit: number,
    accepts: Accepts,
  ): Promise<ReadHit[]> {
    let read = contenders(fused, limit);
    let hits = await hydrate(ownerId, read, accepts);
    for (let round = 1; hits.length < limit && read.length < fused.length; round++) {
      const wanted = (limit - hits.length) * 2 ** round + VERIFY_SPARE;
      const next = contenders(fused, read.length + wanted).slice(read.length);
      read = read.concat(next);
      hits = hits.concat(await hydrate(ownerId, next, accepts));
    }
    return hits;
  };
}
