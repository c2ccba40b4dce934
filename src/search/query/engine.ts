import type { Store } from "../../db/store";
import type { Logger } from "../../lib/log";
import type { Embedder } from "../embedders/embedder";
import { itemKey, type TermStats } from "../indexing/term-stats";
import { itemMatches, partitionWhere } from "../lance/filters";
import type { LanceStore } from "../lance/lance-store";
import { partitionGroup, textTable } from "../lance/partitions";
import {
  type HitOf,
  type RecordsOf,
  type SearchFilters,
  type SearchKind,
  type SearchRecords,
  type SearchRequest,
  type SearchResult,
  type SearchSources,
  type HitSignals,
  SEARCH_SIGNALS,
} from "../types";
import type { IndexView } from "./index-view";
import { createPendingIndex, type PendingEntry } from "./pending-index";
import { bestPendingByText } from "./pending-text";
import { createCandidates, type Candidate, type CandidateAsk } from "./candidates";
import { createForwardCache } from "./forward-cache";
import { analyzeQuery, candidateQuery } from "../analysis/analyzer";
import { timeFit, timeRanges } from "../analysis/dates";
import { contentVector, cosineTo, storedTerms, type ItemTerms } from "../analysis/item-terms";
import { readWordVectors } from "../analysis/word-vectors";
import { lowerQuestionTurns, order, type RankedHit } from "./ranking";
import { createReadBack } from "./read-back";
import { bm25Scorer, fuse, groupStatistics, textScore, vectorTrust, wordsScore } from "./scoring";
import type { SearchTimings } from "./server-timing";

export interface SearchEngineOptions<S extends SearchSources> {
  store: Store;
  lance: LanceStore;
  /** The indexing side, as far as a search needs it. */
  view: IndexView;
  termStats: TermStats;
  sources: S;
  embedder: Embedder | null;
  log: Logger;
  /** The longest a search waits for the query embedding before going full-text only. */
  queryEmbedTimeoutMs: number;
}

/** A search's answer, with where it spent its time and how many of the owner's sources the index does not reflect yet. */
export type SearchResponse<H> = SearchResult<H> & { timings: SearchTimings; indexLag: number };

/**
 * The read path, as the rest of the app sees it. `R` says which row each kind's hits
 * carry (see `SearchSource`): a memory search of an engine over the memory source gets
 * hits whose `record` is the memory row, typed.
 */
export interface SearchEngine<out R extends SearchRecords = SearchRecords> {
  /**
   * Searches one owner's items, every write acknowledged before the call included
   * however far behind the index is. `deadline` (a `performance.now()` time) bounds the
   * wait for the query embedding; past it the search ranks by text alone.
   */
  search<K extends SearchKind & keyof R>(request: SearchRequest<K>): Promise<SearchResponse<HitOf<R, K>>>;
  /**
   * How many items of these kinds (of one partition group) the owner's index holds within
   * `filters`, and how many of them have vectors (unless `vectors: false`): the index as
   * the writer last wrote it.
   */
  countIndexed(
    ownerId: string,
    kinds: SearchKind[],
    filters: SearchFilters,
    options?: { vectors?: boolean },
  ): Promise<{ items: number; withVectors: number }>;
}

const CANDIDATES_PER_RESULT = 4;
const MAX_CANDIDATES = 200;

/**
 * The one search engine: memories, document blocks, chat messages and files all go
 * through `search`. Read-your-writes by construction, never by waiting, and a search's own
 * work follows its results and matches, not how far the index writer is behind:
 * 1. the owner's statistics for the query's terms are read (indexing/term-stats.ts: every
 *    write analysed its items once, in its own transaction, so they are exact at every
 *    moment), and the owner's pending items brought up to date by reading only what came
 *    since this process last looked (pending-index.ts);
 * 2. LanceDB gives full-text and vector candidates among the indexed items; the pending
 *    items give theirs by the same lists (terms, dates, word vectors), in memory;
 * 3. every candidate is scored exactly from its current forward row with those statistics
 *    (scoring.ts), so the ranking depends on the owner's data alone, not on how far the
 *    writer got or how its tables are laid out;
 * 4. the best are read back from the store of record (read-back.ts), so a deleted or
 *    changed source is never answered from the index with its old text, and a changed
 *    source's filters are checked on its current row.
 */
export function createSearchEngine<S extends SearchSources>(o: SearchEngineOptions<S>): SearchEngine<RecordsOf<S>> {
  const { lance, view, log, termStats } = o;
  const db = o.store.db;
  const candidates = createCandidates(o);
  const pendingIndex = createPendingIndex(termStats, view);
  const forwardCache = createForwardCache(termStats);
  const readBack = createReadBack(db, o.sources);

  return {
    async search<K extends SearchKind & keyof RecordsOf<S>>(request: SearchRequest<K>) {
      const started = performance.now();
      const remaining = () => (request.deadline === undefined ? Infinity : request.deadline - performance.now());
      const { ownerId } = request;
      const wanted = new Set(request.signals ?? SEARCH_SIGNALS);
      const vectors = await readWordVectors(log);
      const queryTerms = wanted.has("text") ? [...new Set(analyzeQuery(request.query))] : [];
      const ask: CandidateAsk = {
        text: queryTerms.length ? candidateQuery(request.query) : null,
        words: wanted.has("words") && vectors ? contentVector(vectors, request.query) : null,
        times: wanted.has("time") ? timeRanges(request.query, new Date()) : [],
        neural: wanted.has("vector"),
      };
      const groups = [...new Set(request.kinds.map(partitionGroup))];
      // The statistics first: their versions tell what changed since this process last read.
      const own = await termStats.statistics(db, ownerId, groups, queryTerms);
      const versions = new Map(groups.map((group) => [group, own.corpus.get(group)?.version ?? 0]));
      const pending = await pendingIndex.read(db, ownerId, groups, versions);
      // A replica that does not write the index looks at its newest version: at least the
      // one holding what left the outbox before the pending items were read (the writer
      // announces a version before it takes its rows off the outbox).
      await view.followWriter();
      const stats = groupStatistics(groups, own);
      const textOf = new Map(groups.map((group) => [group, bm25Scorer(queryTerms, stats.get(group)!)]));
      const afterOwn = performance.now();

      const count = Math.min(MAX_CANDIDATES, Math.max(request.limit * CANDIDATES_PER_RESULT, 20));
      const found = await candidates(request, { ...ask, words: null }, count, remaining, pending.indexedOnly);
      const active = [
        ...(queryTerms.length ? (["text"] as const) : []),
        ...(ask.words ? (["words"] as const) : []),
        ...(ask.times.length ? (["time"] as const) : []),
        ...(found.semantic ? (["vector"] as const) : []),
      ];
      // Every signal of every candidate first; fused once the query's vector trust is known.
      const scored: Array<{
        key: string;
        hit: { kind: SearchKind; sourceId: string; itemId: string };
        all: Required<HitSignals>;
      }> = [];
      const seen = new Set<string>();
      // Hits whose filters were not checked on their current row (LanceDB matched the
      // indexed one, or none): the read-back checks them.
      const verify = new Set<string>();
      let textMatches = 0;
      const rank = (
        key: string,
        hit: { kind: SearchKind; sourceId: string; itemId: string },
        terms: ItemTerms,
        cosine: number,
      ) => {
        seen.add(key);
        if (pending.has(`${hit.kind}|${hit.sourceId}`)) verify.add(key);
        const text = queryTerms.length ? textScore(textOf.get(partitionGroup(hit.kind))!(terms)) : 0;
        if (text > 0) textMatches++;
        scored.push({
          key,
          hit: { kind: hit.kind, sourceId: hit.sourceId, itemId: hit.itemId },
          all: {
            text,
            words: ask.words && terms.vector ? wordsScore(cosineTo(ask.words, terms.vector)) : 0,
            time: timeFit(ask.times, terms.at),
            vector: cosine,
          },
        });
      };
      /** Scores LanceDB's candidates with their current forward rows, each once. */
      const rankIndexed = async (list: Candidate[]) => {
        const fresh = list.filter((c) => !seen.has(itemKey(c)));
        const forward = await forwardCache.rows(db, ownerId, fresh, versions);
        for (const hit of fresh) {
          const key = itemKey(hit);
          const stored = forward.get(key);
          // No forward row: the item is gone since LanceDB answered (deleted, or replaced).
          if (stored) rank(key, hit, storedTerms(stored, queryTerms), hit.cosine);
          else seen.add(key);
        }
      };
      await rankIndexed(found.found);
      // Judged on LanceDB's first candidates only: the pending items have no model vector yet.
      const trust = found.semantic ? vectorTrust(scored.map((entry) => entry.all)) : 1;
      // The pending items LanceDB cannot propose yet, by the same lists: the query's terms
      // and the dates it names (none has an embedding-model vector yet).
      const kinds: readonly SearchKind[] = request.kinds;
      const proposed = new Map<string, PendingEntry>();
      // By text, as LanceDB's list: the `count` best matches.
      const byText = bestPendingByText(
        pending,
        queryTerms,
        stats,
        (entry) => kinds.includes(entry.kind) && !seen.has(entry.key),
        count,
      );
      for (const entry of byText) proposed.set(entry.key, entry);
      if (ask.times.length)
        for (const entry of pending.unwritten())
          if (ask.times.some((range) => entry.terms.at >= range.from && entry.terms.at <= range.to))
            proposed.set(entry.key, entry);
      for (const entry of proposed.values())
        if (!seen.has(entry.key) && kinds.includes(entry.kind)) rank(entry.key, entry, entry.terms, 0);
      // Paraphrases: the word vectors' nearest items are asked for when the query's terms leave
      // room on the page (a close word vector alone scores below most keyword matches). The
      // count of matches is the owner's data alone, indexed or pending, so the candidates are too.
      if (ask.words && textMatches < request.limit) {
        await rankIndexed(
          (
            await candidates(
              request,
              { text: null, words: ask.words, times: [], neural: false },
              count,
              remaining,
              pending.indexedOnly,
            )
          ).found,
        );
        for (const entry of nearest(pending.unwritten(), ask.words, count))
          if (!seen.has(entry.key) && kinds.includes(entry.kind)) rank(entry.key, entry, entry.terms, 0);
      }
      const ranked: RankedHit[] = [];
      for (const { key, hit, all } of scored) {
        const score = fuse(active, all, trust);
        if (score === null || score <= 0 || score < (request.minScore ?? 0)) continue;
        const signals: HitSignals = {};
        for (const signal of active) signals[signal] = all[signal];
        ranked.push({ key, ...hit, score, signals });
      }
      ranked.sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      // Ties go to the newer item: every hit tied with the last candidate is read back too, then ordered.
      // Question turns rank a little lower on that page (ranking.ts lowerQuestionTurns).
      const hits = order(
        lowerQuestionTurns(
          await readBack(ownerId, ranked, request.limit, (hit, item) =>
            verify.has(hit.key) ? itemMatches(item, kinds, request.filters) : true,
          ),
          request.minScore,
        ),
        request.limit,
      ) as Array<HitOf<RecordsOf<S>, K>>;
      const embedMs = found.embedMs();
      const timings = { own: afterOwn - started, embed: embedMs, search: performance.now() - afterOwn - embedMs };
      log.debug("search timings", {
        kinds: request.kinds.join(","),
        ownMs: round(timings.own),
        embedMs: round(timings.embed),
        searchMs: round(timings.search),
        pending: pending.size,
        // Groups whose tables' unindexed rows LanceDB scanned (the pending items did not hold them).
        flat: groups.filter((group) => !pending.indexedOnly(group)).length,
      });
      return {
        hits,
        mode: found.semantic ? "semantic" : "fulltext_fallback",
        // Which lists ranked: both, or only the vectors when no query word matched any text.
        strategy: found.semantic ? (textMatches > 0 ? "hybrid" : "vector") : "fulltext",
        signals: active,
        timings,
        indexLag: pending.lag(kinds),
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

/** The `count` pending items whose word vectors are nearest the query's (what LanceDB's word-vector list gives of the indexed ones). */
function nearest(entries: Iterable<PendingEntry>, query: Float32Array, count: number): PendingEntry[] {
  const close: Array<{ entry: PendingEntry; cosine: number }> = [];
  for (const entry of entries)
    if (entry.terms.vector) close.push({ entry, cosine: cosineTo(query, entry.terms.vector) });
  return close
    .sort((a, b) => b.cosine - a.cosine)
    .slice(0, count)
    .map((c) => c.entry);
}
