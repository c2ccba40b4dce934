import type { Store } from "../../db/store";
import type { Logger } from "../../lib/log";
import type { Embedder } from "../embedders/embedder";
import { partitionWhere } from "../lance/filters";
import type { RawHit } from "../lance/lance-schema";
import type { LanceStore } from "../lance/lance-store";
import { partitionGroup, textTable, type PartitionGroup } from "../lance/partitions";
import type { HitOf, RecordsOf, SearchFilters, SearchKind, SearchRecords, SearchRequest, SearchResult, SearchSources } from "../types";
import type { IndexView } from "./index-view";
import { createQueryVectors } from "./query-vectors";
import { fullTextQuery } from "./query-text";
import { createReadBack } from "./read-back";
import { fuse, order } from "./ranking";
import type { SearchTimings } from "./server-timing";

export interface SearchEngineOptions<S extends SearchSources> {
  store: Store;
  lance: LanceStore;
  /** The indexing side, as far as a search needs it. */
  view: IndexView;
  sources: S;
  embedder: Embedder | null;
  log: Logger;
  /** The longest a search waits for the query embedding before going full-text only. */
  queryEmbedTimeoutMs: number;
  /** The longest a search waits for the caller's own pending writes to reach the index. */
  searchWaitMs: number;
}

/** A search's answer, with where it spent its time and how many of the owner's writes it could not see yet. */
export type SearchResponse<H> = SearchResult<H> & { timings: SearchTimings; indexLag: number };

/**
 * The read path, as the rest of the app sees it. `R` says which row each kind's hits
 * carry (see `SearchSource`): a memory search of an engine over the memory source gets
 * hits whose `record` is the memory row, typed.
 */
export interface SearchEngine<out R extends SearchRecords = SearchRecords> {
  /**
   * Searches one owner's items. `deadline` (a `performance.now()` time) bounds the whole
   * search: waiting for the index, embedding the query; past it the search answers from
   * the index as it is and `indexLag` says how many of the owner's writes it could not
   * see yet.
   */
  search<K extends SearchKind & keyof R>(request: SearchRequest<K>): Promise<SearchResponse<HitOf<R, K>>>;
  /**
   * How many items of these kinds (of one partition group) the owner's index holds within
   * `filters`, and how many of them have vectors (unless `vectors: false`): the index as
   * the writer last wrote it.
   */
  countIndexed(ownerId: string, kinds: SearchKind[], filters: SearchFilters, options?: { vectors?: boolean }): Promise<{ items: number; withVectors: number }>;
}

const CANDIDATES_PER_RESULT = 4;
const MAX_CANDIDATES = 200;

/**
 * The one search engine: memories, document blocks, chat messages and files all go
 * through `search`. Full-text candidates and (query embedding → vector candidates) run
 * concurrently within the caller's filter and are fused (see ranking.ts); every hit is
 * then checked against the store of record (read-back.ts), so a deleted or changed source
 * is never answered from the index with its old text.
 */
export function createSearchEngine<S extends SearchSources>(o: SearchEngineOptions<S>): SearchEngine<RecordsOf<S>> {
  const { lance, view, log, queryEmbedTimeoutMs, searchWaitMs } = o;
  const embedQuery = createQueryVectors(o.embedder, log);
  const readBack = createReadBack(o.store.db, o.sources);

  /** Full-text and vector candidates from the owner's partition tables of the kinds searched. */
  async function candidates(request: SearchRequest, count: number, remaining: () => number) {
    const byGroup = new Map<PartitionGroup, SearchKind[]>();
    for (const kind of request.kinds) byGroup.set(partitionGroup(kind), [...(byGroup.get(partitionGroup(kind)) ?? []), kind]);
    const query = fullTextQuery(request.query);
    let embedMs = 0;
    let vector: Promise<Float32Array | null> | null = null;
    const queryVector = () =>
      (vector ??= (async () => {
        const started = performance.now();
        const result = await embedQuery(request.ownerId, request.query, Math.min(queryEmbedTimeoutMs, remaining()));
        embedMs = performance.now() - started;
        return result;
      })());
    const perGroup = await Promise.all(
      [...byGroup].map(async ([group, kinds]) => {
        const where = partitionWhere(kinds, request.filters);
        const table = textTable(request.ownerId, group);
        const vectors = view.vectorTable(request.ownerId, group);
        const [text, near] = await Promise.all([
          view.hasContext(table).then((context) => {
            const indexedOnly = view.fullyIndexed(table);
            view.noteSearch(table);
            return lance.searchText(table, where, query, count, { context, memories: group === "mem", indexedOnly });
          }),
          vectors ? queryVector().then((v) => (v ? lance.searchVectors(vectors, where, v, count, { memories: group === "mem" }) : null)) : Promise.resolve(null),
        ]);
        return { text, near };
      }),
    );
    const textHits = perGroup.flatMap((g) => g.text);
    const vectorLists = perGroup.map((g) => g.near).filter((list): list is RawHit[] => list !== null);
    return { textHits, vectorHits: vectorLists.length ? vectorLists.flat() : null, embedMs: () => embedMs };
  }

  return {
    async search<K extends SearchKind & keyof RecordsOf<S>>(request: SearchRequest<K>) {
      const started = performance.now();
      const remaining = () => (request.deadline === undefined ? Infinity : request.deadline - performance.now());
      // Only the kinds searched: a memory search does not wait for a document's blocks.
      const flushed = await view.waitForOwnWrites(request.ownerId, Math.max(0, Math.min(searchWaitMs, remaining())), request.kinds);
      // A replica that does not write the index looks at its newest version.
      await view.followWriter();
      const afterFlush = performance.now();
      const count = Math.min(MAX_CANDIDATES, Math.max(request.limit * CANDIDATES_PER_RESULT, 20));
      const { textHits, vectorHits, embedMs: embedTime } = await candidates(request, count, remaining);
      const embedMs = embedTime();
      const fused = fuse(textHits, vectorHits).filter((hit) => hit.score > 0 && hit.score >= (request.minScore ?? 0));
      // Ties go to the newer item, a time the index does not hold (one column less to read
      // per hit): every hit tied with the last candidate is read back too, then ordered.
      // Each hit is of a kind searched and carries the row its kind's source read back.
      const hits = order(await readBack(request.ownerId, fused, request.limit), request.limit) as Array<HitOf<RecordsOf<S>, K>>;
      const semantic = vectorHits !== null;
      const finished = performance.now();
      const timings = { flush: afterFlush - started, embed: embedMs, search: finished - afterFlush - embedMs };
      log.debug("search timings", { kinds: request.kinds.join(","), flushMs: round(timings.flush), embedMs: round(timings.embed), searchMs: round(timings.search) });
      return {
        hits,
        mode: semantic ? "semantic" : "fulltext_fallback",
        // Which lists ranked: both, or only the vectors when no query word matched any text.
        strategy: semantic ? (textHits.length ? "hybrid" : "vector") : "fulltext",
        timings,
        indexLag: flushed.lag,
      } as const;
    },

    async countIndexed(ownerId, kinds, filters, { vectors = true } = {}) {
      await view.followWriter();
      const group = partitionGroup(kinds[0]);
      const where = partitionWhere(kinds, filters);
      const vectorTable = vectors ? view.vectorTable(ownerId, group) : null;
      const [items, withVectors] = await Promise.all([
        lance.countRows(textTable(ownerId, group), where),
        vectorTable ? lance.countRows(vectorTable, where) : Promise.resolve(0),
      ]);
      return { items, withVectors };
    },
  };
}

const round = (ms: number) => Math.round(ms * 100) / 100;
