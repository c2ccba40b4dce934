import type { Settings } from "../../db/leases";
import type { Executor, Store } from "../../db/store";
import type { Logger } from "../../lib/log";
import type { Embedder } from "../embedders/embedder";
import type { ContextFlags } from "./context-flags";
import { byPartition, deletedFrom, keysBySource, toIndexRow, writtenByTable } from "./batch-rows";
import { CompactionPolicy } from "./compaction-policy";
import { vectorKey, type EmbeddingCache } from "./embedding-cache-repository";
import { WORD_VECTOR_DIMS } from "../lance/lance-schema";
import type { LanceStore } from "../lance/lance-store";
import { INDEX_SCHEMA_VERSION } from "../lance/layout";
import { isVectorTable, partitionGroup, textTable, vectorTable, type PartitionGroup } from "../lance/partitions";
import type { IndexOutbox, OutboxRow, OutboxStage } from "./outbox-repository";
import { loadSourceItems, sourceKey, type AnyItem, type SearchSources, type SourceRef } from "../types";
import { inParallel } from "../../lib/in-parallel";
import { VectorOutages } from "./vector-outage";
import { itemKey, type TermStats } from "./term-stats";
import { dequantise } from "../analysis/item-terms";
import { createPurgeLog } from "./purges-repository";
import { Replays } from "./replays";

export const EMBED_CHUNK = 64;
/** Owner tables committed at once within a batch (LanceDB works on each in its own threads). */
const PARTITION_COMMITS = 4;
/** Settings key that changes with every index write (see `announceVersion`). */
export const INDEX_VERSION_KEY = "index_version";
const KEEP_VERSIONS_MS = 60_000;
/** Tables one compaction request to the writer's child takes (each committed on its own; counted once it is answered). */
const COMPACT_PER_REQUEST = 256;
/** Settings key: every write analyses its own changes (set once the sources pending before that were analysed). */
const ANALYSED_AT_WRITE = "terms_analysed_at_write";
/**
 * Full-text index updates between renewals of the LanceDB connection, which keeps memory
 * for each (docs/performance.md#why-the-code-is-tuned-as-it-is).
 */
const RECYCLE_AFTER_OPTIMIZES = 64;
export interface IndexWriterOptions {
  contextFlags: ContextFlags;
  store: Store;
  outbox: IndexOutbox;
  lance: LanceStore;
  sources: SearchSources;
  embedder: Embedder | null;
  cache: EmbeddingCache;
  settings: Settings;
  log: Logger;
  maxFragments: number;
  /** Rows outside a table's full-text index that compact it (with a tenth of the table): compaction-policy.ts. */
  maxUnindexedRows: number;
  termStats: TermStats;
}

/**
 * The writes of one outbox batch into LanceDB, for the indexer (which decides when).
 * Each batch is one delete and one add per table; compaction keeps fragments bounded.
 */
export class IndexWriter {
  /** Which rows of a batch may be in LanceDB already (replays.ts). */
  private readonly replays = new Replays();
  /** Which tables to compact, and when (compaction-policy.ts). */
  readonly compaction: CompactionPolicy;
  dimension: number | null = null;
  lastIndexedAt: string | null = null;
  /** Why vectors cannot be made now, recorded for processes that follow the writer. */
  private readonly vectorOutage: VectorOutages;

  /**
   * `searchesWaiting`: whether searches wait for the writer now. A compaction the searches
   * paid for waits for a quiet moment then (every job of the writer runs in turn, so a
   * compaction under load would hold up their commits); the fragment bound does not wait.
   * Replicas share a PostgreSQL store; the embedded one has this server alone.
   */
  constructor(
    private readonly o: IndexWriterOptions,
    searchesWaiting: () => boolean = () => false,
  ) {
    this.compaction = new CompactionPolicy(
      o.lance,
      { fragments: o.maxFragments, unindexedRows: o.maxUnindexedRows },
      searchesWaiting,
      o.store.dialect === "postgres",
    );
    this.vectorOutage = new VectorOutages({ settings: o.settings, db: o.store.db });
  }

  /**
   * Called when this process becomes the index writer. What it knew of the tables from an
   * earlier term is forgotten: the writer in between may have left rows outside their
   * indices, and a table taken for fully indexed would be searched without them.
   */
  async takeOver(): Promise<void> {
    await this.analysePendingOnce();
    this.replays.tookOver(await this.o.outbox.maxSeqs());
    this.compaction.clear();
    await this.loadDimension();
    this.vectorOutage.tookOver();
  }

  /** A store from before writes analysed their changes counted indexed items only: its pending sources are analysed once. */
  private async analysePendingOnce(): Promise<void> {
    const { store, settings, outbox, termStats } = this.o;
    if ((await settings.get(store.db, ANALYSED_AT_WRITE)) === "1") return;
    await store.transaction(async (tx) => {
      if ((await settings.get(tx, ANALYSED_AT_WRITE)) === "1") return;
      const pending = await outbox.pendingTextSources(tx);
      for (let i = 0; i < pending.length; i += 500) await termStats.refresh(tx, pending.slice(i, i + 500));
      await settings.set(tx, ANALYSED_AT_WRITE, "1");
    });
  }

  async loadDimension(): Promise<void> {
    const value = await this.o.settings.get(this.o.store.db, "vector_dimension");
    this.dimension = value ? Number(value) : null;
  }

  /** An owner's vector table of a group in the current space, once vectors exist. */
  vectorTableFor(ownerId: string, group: PartitionGroup): string | null {
    const { embedder } = this.o;
    return embedder && this.dimension ? vectorTable(ownerId, group, embedder.spaceId, this.dimension) : null;
  }

  /** The table whose ANN index is being built (set by vector-index-builds.ts), or null. */
  buildingTable: string | null = null;
  /** Tables with vectors (vector tables; full-text tables' word vectors) written since their ANN index was last considered. */
  readonly vectorTablesWritten = new Set<string>();

  /** Tables had rows deleted (table → earliest delete, ms), noted in the store: index-purge.ts rewrites them. */
  onDeletes: (tables: Map<string, number>) => void = () => {};
  private readonly purgeLog = createPurgeLog();

  /** The text stage of a batch: items replaced in `items`; rows move on to the vector stage. */
  async processText(rows: OutboxRow[]): Promise<void> {
    const { refs, deletes } = this.replays.plan(rows, "text");
    const items = await this.load(refs);
    // Analysed once, by the write (term-stats.ts `refresh`): the LanceDB rows take the stored word vectors.
    const wordVectors = await this.o.termStats.wordVectors(this.o.store.db, refs);
    const parts = byPartition(deletes, items, (ref) => textTable(ref.ownerId, partitionGroup(ref.kind)));
    // Before the commits: a search finds each source in the outbox or in this list (index-view.ts).
    for (const [table, sources] of writtenByTable(rows)) this.compaction.noteWriting(table, sources);
    // Different owners' tables are independent datasets: commit a few at once.
    await inParallel([...parts], PARTITION_COMMITS, async ([table, part]) => {
      // The context columns get their full-text indices before the table is marked as
      // holding context: a search that sees the mark finds them.
      const hasContext = part.items.some((item) => item.contextBefore || item.contextAfter);
      const context = hasContext || (await this.o.contextFlags.has(table));
      const rows = part.items.map((item) => ({
        ...toIndexRow(item),
        wvec: dequantise(wordVectors.get(`${item.ownerId}\u0000${itemKey(item)}`) ?? null, WORD_VECTOR_DIMS),
      }));
      if (await this.o.lance.replaceItems(table, part.deleteKeys, rows, { context })) this.compaction.created(table);
      if (hasContext) await this.o.contextFlags.mark(table);
      this.compaction.noteCommit(table, part.items.length);
      // Its word vectors get an ANN index once the table is large (vector-index-builds.ts).
      if (part.items.length) this.vectorTablesWritten.add(table);
    });
    await this.announceVersion();
    const deleted = deletedFrom(rows, parts);
    // Without a vector stage, this is where changed and deleted sources let go of cached vectors.
    if (!this.o.embedder) await this.o.cache.release(refs.map(sourceKey), () => keysBySource(refs, items, new Map()));
    const seqs = rows.map((r) => r.seq);
    await this.o.store.transaction(async (tx) => {
      await this.purgeLog.note(tx, deleted);
      if (this.o.embedder) await this.o.outbox.advanceToVector(seqs, tx);
      else await this.o.outbox.remove(seqs, tx);
    });
    if (deleted.size) this.onDeletes(deleted);
    this.lastIndexedAt = new Date().toISOString();
    this.replays.finished("text");
  }

  /** Embeds a batch; false (rows postponed) when the embedder cannot answer now. */
  async processVectors(rows: OutboxRow[], onOutage: (error: Error, retryAt: number) => void): Promise<boolean> {
    const embedder = this.o.embedder!;
    const { refs, deletes } = this.replays.plan(rows, "vector");
    const items = await this.load(refs);
    // Cache keys are per owner and text (see `vectorKey`); each distinct one is embedded once.
    const keyOf = new Map(items.map((item) => [item, vectorKey(item.ownerId, item.text)]));
    const vectors = await this.o.cache.getMany(embedder.spaceId, [...new Set(keyOf.values())]);
    const missing = new Map<string, string>();
    for (const [item, key] of keyOf) if (!vectors.has(key)) missing.set(key, item.text);
    const toEmbed = [...missing];
    const embedded: Array<[string, Float32Array]> = [];
    const uses = keysBySource(refs, items, keyOf);
    try {
      for (let i = 0; i < toEmbed.length; i += EMBED_CHUNK) {
        const chunk = toEmbed.slice(i, i + EMBED_CHUNK);
        const vectorsOfChunk = await embedder.embed(
          chunk.map(([, text]) => text),
          "document",
        );
        chunk.forEach(([key], j) => {
          embedded.push([key, vectorsOfChunk[j]]);
          vectors.set(key, vectorsOfChunk[j]);
        });
      }
    } catch (error) {
      // What was embedded before the outage is kept for the retry.
      await this.o.cache.record(embedder.spaceId, embedded, uses);
      await this.o.outbox.postpone(rows);
      const outage = await this.vectorOutage.failed(error);
      onOutage(error as Error, Date.parse(outage.retryAt));
      return false;
    }
    await this.vectorOutage.landed();
    await this.o.cache.record(embedder.spaceId, embedded, uses);
    const dimension = vectors.size ? vectors.values().next().value!.length : this.dimension;
    if (dimension && this.dimension !== dimension) {
      await this.o.settings.set(this.o.store.db, "vector_dimension", String(dimension));
      this.dimension = dimension;
    }
    let deleted = new Map<string, number>();
    if (dimension) {
      const tableOf = (ref: SourceRef) =>
        vectorTable(ref.ownerId, partitionGroup(ref.kind), embedder.spaceId, dimension);
      const parts = byPartition(deletes, items, tableOf);
      deleted = deletedFrom(rows, parts);
      await inParallel([...parts], PARTITION_COMMITS, async ([table, part]) => {
        const withVectors = part.items.map((item) => ({ ...toIndexRow(item), vector: vectors.get(keyOf.get(item)!)! }));
        await this.o.lance.replaceVectors(table, dimension, part.deleteKeys, withVectors);
        this.compaction.noteCommit(table, withVectors.length);
        if (withVectors.length) this.vectorTablesWritten.add(table);
      });
      await this.announceVersion();
    }
    await this.o.store.transaction(async (tx) => {
      await this.purgeLog.note(tx, deleted);
      await this.o.outbox.remove(
        rows.map((r) => r.seq),
        tx,
      );
    });
    if (deleted.size) this.onDeletes(deleted);
    this.lastIndexedAt = new Date().toISOString();
    this.replays.finished("vector");
    return true;
  }

  private load(refs: SourceRef[]): Promise<AnyItem[]> {
    return loadSourceItems(this.o.store.db, this.o.sources, refs);
  }

  /** Every source of every domain, streamed, for rebuilds and re-embedding. */
  async *allSources(tx: Executor = this.o.store.db): AsyncGenerator<SourceRef> {
    for (const source of Object.values(this.o.sources)) if (source) yield* source.listAll(tx);
  }

  /**
   * Tables that cannot be read (damaged files) are dropped and the index rebuilt from the
   * store of record, so a damaged index is rebuilt instead of failing every search. Run
   * after taking over, beside serving: it opens every table, which would make a start with
   * many users' tables wait (docs/performance.md#many-users).
   */
  async repairDamaged(): Promise<void> {
    const { lance, outbox } = this.o;
    const damaged = await lance.unreadableTables();
    if (!damaged.length) return;
    this.o.log.warn("the search index is damaged; rebuilding it from the store of record", {
      tables: damaged.length,
      first: damaged[0].name,
      reason: damaged[0].reason,
    });
    for (const { name } of damaged) await lance.dropTable(name);
    if ((await outbox.pendingTextSeq("*")) === null) await this.rebuild();
  }

  /** Whether the store of record holds anything to index (a page of keys read, on a start without an index only). */
  private async hasRecords(): Promise<boolean> {
    for await (const _ of this.allSources()) return true;
    return false;
  }

  /** An index of an older layout is rebuilt; so is a missing one when the store holds records. */
  async reconcileSchema(): Promise<void> {
    const { store, settings, outbox, lance } = this.o;
    const hasIndex = await lance.hasTables();
    const current = (await settings.get(store.db, "index_schema")) === INDEX_SCHEMA_VERSION;
    const rebuild = (hasIndex ? !current : await this.hasRecords()) && (await outbox.pendingTextSeq("*")) === null;
    if (rebuild)
      this.o.log.info(
        hasIndex
          ? "the search index has an older layout; rebuilding it"
          : "the search index is missing; rebuilding it from the store of record",
      );
    // Rebuilt now rather than queued: until every source is pending again, searches would
    // trust the term statistics of an index that is gone or of another layout.
    if (rebuild) await this.rebuild();
    if (!current) await settings.set(store.db, "index_schema", INDEX_SCHEMA_VERSION);
  }

  /** When the configured embedder changed, old vectors are dropped and every source re-embedded. */
  async reconcileVectorSpace(): Promise<void> {
    const { store, settings, lance, embedder } = this.o;
    const space = embedder?.spaceId ?? "";
    if (((await settings.get(store.db, "vector_space")) ?? "") === space) return;
    for (const name of await lance.tableNames()) if (isVectorTable(name)) await lance.dropTable(name);
    let requeued = 0;
    // Queued re-embeds and the new space are recorded together: a crash cannot lose one.
    await store.transaction(async (tx) => {
      if (space) requeued = await this.enqueueEverySource(tx, "vector");
      await settings.set(tx, "vector_space", space);
      await settings.set(tx, "vector_dimension", "");
    });
    this.dimension = null;
    if (space) await this.o.cache.dropOtherSpaces(space);
    if (requeued) this.o.log.info("vector space changed; re-embedding every source", { space, sources: requeued });
  }

  /** Queues every source of every domain for a stage, in batches as they are listed; returns how many. */
  private async enqueueEverySource(tx: Executor, stage: OutboxStage): Promise<number> {
    let count = 0;
    let batch: SourceRef[] = [];
    const flush = async () => {
      await this.o.outbox.enqueueMany(tx, batch, "insert", stage);
      count += batch.length;
      batch = [];
    };
    for await (const ref of this.allSources(tx)) {
      batch.push(ref);
      if (batch.length >= 500) await flush();
    }
    await flush();
    return count;
  }

  /** Drops the index and re-enqueues every source, atomically with clearing the outbox. */
  async rebuild(): Promise<void> {
    this.o.log.info("rebuilding the search index from the store of record");
    // Cleared first, then listed, in one transaction: a write committed before the
    // clear is in the listing, one committed after keeps its own outbox row. Every source
    // is pending before the old rows go, so a search meanwhile reads them from the store.
    await this.o.store.transaction(async (tx) => {
      await this.o.outbox.clear(tx);
      await this.o.termStats.clear(tx);
      // Dropped tables take their deleted rows with them.
      await this.purgeLog.clear(tx);
      await this.enqueueEverySource(tx, "text");
      await this.o.settings.set(tx, "vector_dimension", "");
    });
    await this.o.lance.dropAll();
    await this.announceVersion();
    this.dimension = null;
    this.replays.emptied();
    this.compaction.clear();
  }

  /**
   * Tells other processes that the index has a new version, before the outbox says the
   * rows are indexed: a replica that saw the rows leave the outbox then finds the
   * version they are in.
   */
  async announceVersion(): Promise<void> {
    await this.o.settings.set(this.o.store.db, INDEX_VERSION_KEY, `${Date.now()}-${++this.commits}`);
  }
  private commits = 0;
  /**
   * Compacts the dirty tables that are due (compaction-policy.ts; `force`: every one), at most
   * `maxTables` per call (true when some remain). Vector tables, and the full-text table whose
   * word vectors are being indexed, wait while an ANN index is built (compaction restarts it).
   */
  async compact(force: boolean, skipVectors: boolean, maxTables = Number.POSITIVE_INFINITY): Promise<boolean> {
    const due: string[] = [];
    let more = false;
    for (const table of this.compaction.dirtyTables()) {
      if (skipVectors && (isVectorTable(table) || table === this.buildingTable)) continue;
      if (!(await this.compaction.due(table, force))) continue;
      if (due.length >= maxTables) {
        more = true;
        break;
      }
      due.push(table);
    }
    // One request for many: each opens a LanceDB connection of its own (writer-child.ts `optimize`).
    for (let i = 0; i < due.length; i += COMPACT_PER_REQUEST) {
      const batch = due.slice(i, i + COMPACT_PER_REQUEST);
      await this.o.lance.optimize(batch, KEEP_VERSIONS_MS);
      for (const table of batch) this.compaction.compacted(table);
    }
    // LanceDB keeps memory on its connection for each full-text index update made or loaded
    // through it (a purge's rewrite, a table opened again after a compaction): renewed every
    // so many, never while an ANN index build uses the connection (`skipVectors`).
    if (!skipVectors) await this.o.lance.recycleConnectionAfter(RECYCLE_AFTER_OPTIMIZES);
    return more;
  }
}
