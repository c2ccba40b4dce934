import type { Logger } from "../../lib/log";
import type { Embedder } from "../embedders/embedder";
import type { TimeRange } from "../analysis/dates";
import { partitionWhere } from "../lance/filters";
import type { RawHit } from "../lance/lance-schema";
import type { LanceStore } from "../lance/lance-store";
import { partitionGroup, textTable, type PartitionGroup } from "../lance/partitions";
import type { SearchKind, SearchRequest } from "../types";
import type { IndexView } from "./index-view";
import { createQueryVectors } from "./query-vectors";
import { itemKey } from "../indexing/term-stats";
import { vectorScore } from "./scoring";

/** What a search asks LanceDB for, each list only when its signal takes part. */
export interface CandidateAsk {
  /** Words for the full-text index (analyzer.ts `candidateQuery`); null: no text signal. */
  text: string | null;
  /** The query's word vector; null: no word-vector signal. */
  words: Float32Array | null;
  /** Time ranges the query names; empty: no time signal. */
  times: TimeRange[];
  /** Whether to embed the query and search the embedding model's vectors. */
  neural: boolean;
}

/** An indexed item LanceDB proposed, with the cosine of its neural vector when one was searched. */
export interface Candidate {
  kind: SearchKind;
  sourceId: string;
  itemId: string;
  cosine: number;
}

/**
 * Candidates from LanceDB, the engine underneath: full text, word vectors, time ranges and
 * the embedding model's vectors, each within the caller's filter, concurrently, in the
 * owner's partition tables of the kinds searched. LanceDB proposes; the engine scores.
 */
export function createCandidates(o: {
  lance: LanceStore;
  view: IndexView;
  embedder: Embedder | null;
  log: Logger;
  queryEmbedTimeoutMs: number;
}) {
  const { lance, view } = o;
  const embedQuery = createQueryVectors(o.embedder, o.log);

  /** `indexedOnly(group)`: the caller holds every row of the group's table outside the full-text index (pending-index.ts). */
  return async function candidates(
    request: SearchRequest,
    ask: CandidateAsk,
    count: number,
    remaining: () => number,
    indexedOnly: (group: PartitionGroup) => boolean,
  ) {
    const byGroup = new Map<PartitionGroup, SearchKind[]>();
    for (const kind of request.kinds)
      byGroup.set(partitionGroup(kind), [...(byGroup.get(partitionGroup(kind)) ?? []), kind]);
    let embedMs = 0;
    let vector: Promise<Float32Array | null> | null = null;
    const queryVector = () =>
      (vector ??= (async () => {
        const started = performance.now();
        const result = await embedQuery(request.ownerId, request.query, Math.min(o.queryEmbedTimeoutMs, remaining()));
        embedMs = performance.now() - started;
        return result;
      })());
    const none = Promise.resolve([] as RawHit[]);
    const perGroup = await Promise.all(
      [...byGroup].map(async ([group, kinds]) => {
        const where = partitionWhere(kinds, request.filters);
        const table = textTable(request.ownerId, group);
        const memories = group === "mem";
        const vectors = ask.neural ? view.vectorTable(request.ownerId, group) : null;
        const [text, words, times, near] = await Promise.all([
          ask.text
            ? view.hasContext(table).then((context) => {
                // The unindexed rows are paid for: scanned here when the pending items do not
                // hold them, looked up among the pending items when they do.
                const held = indexedOnly(group);
                view.noteSearch(table, held);
                return lance.searchText(table, where, ask.text!, count, { context, memories, indexedOnly: held });
              })
            : none,
          ask.words ? lance.searchWordVectors(table, where, ask.words, count, { memories }) : none,
          Promise.all(
            ask.times.map((range) => lance.searchTimeRange(table, where, range.from, range.to, count, { memories })),
          ).then((lists) => lists.flat()),
          vectors
            ? queryVector().then((v) => (v ? lance.searchVectors(vectors, where, v, count, { memories }) : null))
            : Promise.resolve(null),
        ]);
        return { found: [...text, ...words, ...times], near };
      }),
    );
    const vectorLists = perGroup.map((g) => g.near).filter((list): list is RawHit[] => list !== null);
    return {
      /** Every candidate once, with its best neural cosine (0 when it came from another list). */
      found: merge(
        perGroup.flatMap((g) => g.found),
        vectorLists.flat(),
      ),
      /** Whether the embedding model's vectors were searched (some table had them and the query embedded). */
      semantic: vectorLists.length > 0,
      embedMs: () => embedMs,
    };
  };
}

function merge(found: RawHit[], near: RawHit[]): Candidate[] {
  const byKey = new Map<string, Candidate>();
  const add = (hit: RawHit, cosine: number) => {
    const candidate = { kind: hit.kind as SearchKind, sourceId: hit.source_id, itemId: hit.item_id, cosine };
    const key = itemKey(candidate);
    const seen = byKey.get(key);
    if (!seen) byKey.set(key, candidate);
    else seen.cosine = Math.max(seen.cosine, cosine);
  };
  for (const hit of found) add(hit, 0);
  for (const hit of near) add(hit, vectorScore(hit._distance ?? 1));
  return [...byKey.values()];
}
