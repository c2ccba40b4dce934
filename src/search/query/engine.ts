import type { Store } from "../../db/store";
import type { Logger } from "../../lib/log";
import type { Embedder } from "../embedders/embedder";
import { itemKey, type TermStats } from "../indexing/term-stats";
import { itemMatches, partitionWhere } from "../lance/filters";
import type { LanceStore } from "../lance/lance-store";
import { partitionGroup, textTable } from "../lance/partitions";
import {
  sourceKey,
  type AnyItem,
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
import { loadPending } from "./pending";
import { createCandidates, type Candidate, type CandidateAsk } from "./candidates";
import { analyzeQuery, candidateQuery } from "../analysis/analyzer";
import { timeFit, timeRanges } from "../analysis/dates";
import { contentVector, cosineTo, type ItemTerms } from "../analysis/item-terms";
import { readWordVectors } from "../analysis/word-vectors";
import { lowerQuestionTurns, order, type RankedHit } from "./ranking";
import { createReadBack } from "./read-back";
import { bm25, fuse, ownStatistics, textScore, vectorTrust, wordsScore } from "./scoring";
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
 * through `search`. Read-your-writes by construction, never by waiting:
 * 1. one statement reads the owner's pending sources (outbox rows the index does not
 *    reflect yet) and the owner's term statistics (indexing/term-stats.ts);
 * 2. the pending sources' current items are read from the store of record;
 * 3. LanceDB gives full-text and vector candidates among the indexed items, minus the
 *    pending sources' (their index rows are stale);
 * 4. every candidate, indexed or pending, is scored exactly with the owner's statistics
 *    corrected for the pending items (scoring.ts), so the ranking depends on the owner's
 *    data alone, not on how far the writer got or how its tables are laid out;
 * 5. the best are read back from the store of record (read-back.ts), so a deleted or
 *    changed source is never answered from the index with its old text.
 */
export function createSearchEngine<S extends SearchSources>(o: SearchEngineOptions<S>): SearchEngine<RecordsOf<S>> {
  const { lance, view, log, termStats } = o;
  const db = o.store.db;
  const candidates = createCandidates(o);
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
      const snapshot = await termStats.snapshot(db, ownerId, groups, queryTerms);
      // A replica that does not write the index looks at its newest version: at least the
      // one the snapshot's counted items are in (the writer announces a version before it
      // takes its rows off the outbox).
      await view.followWriter();
      const pending = await loadPending(db, o.sources, snapshot.pending, vectors);
      const stats = ownStatistics(groups, snapshot, pending, queryTerms);
      const pendingSources = new Set(snapshot.pending.map(sourceKey));
      const afterOwn = performance.now();

      const count = Math.min(MAX_CANDIDATES, Math.max(request.limit * CANDIDATES_PER_RESULT, 20));
      const found = await candidates(request, { ...ask, words: null }, count, remaining);
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
      let textMatches = 0;
      const rank = (
        key: string,
        hit: { kind: SearchKind; sourceId: string; itemId: string },
        terms: ItemTerms,
        cosine: number,
      ) => {
        const text = queryTerms.length ? textScore(bm25(terms, queryTerms, stats.get(partitionGroup(hit.kind))!)) : 0;
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
      /** Scores LanceDB's candidates: indexed items, minus the pending sources' stale rows, each once. */
      const rankIndexed = async (list: Candidate[]) => {
        const fresh = list.filter(
          (c) =>
            !pendingSources.has(sourceKey({ ownerId, kind: c.kind, sourceId: c.sourceId })) && !seen.has(itemKey(c)),
        );
        const forward = await termStats.forwardRows(db, ownerId, fresh, queryTerms);
        for (const hit of fresh) {
          const key = itemKey(hit);
          seen.add(key);
          const terms = forward.get(key);
          // No forward row: the item is gone since LanceDB answered (deleted, or replaced).
          if (terms) rank(key, hit, terms, hit.cosine);
        }
      };
      await rankIndexed(found.found);
      // Judged on LanceDB's first candidates only: the pending items have no model vector yet.
      const trust = found.semantic ? vectorTrust(scored.map((entry) => entry.all)) : 1;
      // The pending items within the request's kinds and filters; none has an embedding-model vector yet.
      const known = new Map<string, AnyItem>();
      for (const { item, terms } of pending) {
        if (!itemMatches(item, request.kinds, request.filters)) continue;
        const key = itemKey(item);
        known.set(key, item);
        rank(key, item, terms, 0);
      }
      // Paraphrases: the word vectors' nearest items are asked for when the query's terms leave
      // room on the page (a close word vector alone scores below most keyword matches). The
      // count of matches is the owner's data alone, indexed or pending, so the candidates are too.
      if (ask.words && textMatches < request.limit) {
        await rankIndexed(
          (await candidates(request, { text: null, words: ask.words, times: [], neural: false }, count, remaining))
            .found,
        );
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
        lowerQuestionTurns(await readBack(ownerId, ranked, request.limit, known), request.minScore),
        request.limit,
      ) as Array<HitOf<RecordsOf<S>, K>>;
      const embedMs = found.embedMs();
      const timings = { own: afterOwn - started, embed: embedMs, search: performance.now() - afterOwn - embedMs };
      log.debug("search timings", {
        kinds: request.kinds.join(","),
        ownMs: round(timings.own),
        embedMs: round(timings.embed),
        searchMs: round(timings.search),
        pending: pending.length,
      });
      return {
        hits,
        mode: found.semantic ? "semantic" : "fulltext_fallback",
        // Which lists ranked: both, or only the vectors when no query word matched any text.
        strategy: found.semantic ? (textMatches > 0 ? "hybrid" : "vector") : "fulltext",
        signals: active,
        timings,
        indexLag: snapshot.pending.filter((ref) => request.kinds.includes(ref.kind as K)).length,
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
