import type { Database } from "bun:sqlite";
import type { Lease, Settings } from "../db/leases";
import type { Logger } from "../lib/log";
import type { Embedder } from "./embedders/embedder";
import { metaEntries } from "./filters";
import { textHash, type EmbeddingCache } from "./embedding-cache";
import { INDEX_SCHEMA_VERSION, ITEMS_TABLE, vectorTableName, type IndexRow, type LanceStore } from "./lance-store";
import type { Outbox, OutboxRow } from "./outbox";
import { sourceKey, type SearchItem, type SearchKind, type SearchSource, type SourceRef } from "./types";

export interface IndexerOptions {
  db: Database;
  outbox: Outbox;
  lance: LanceStore;
  sources: Map<SearchKind, SearchSource>;
  embedder: Embedder | null;
  cache: EmbeddingCache;
  settings: Settings;
  lease: Lease;
  log: Logger;
  batchSize: number;
  maxFragments: number;
  /**
   * Exact vector search reads every vector: at 384 dimensions it stays within a few ms
   * up to about 8k rows (the default); past it the indexer builds an ANN index.
   */
  vectorIndexMinRows: number;
}

const VECTOR_BATCH = 256;
const EMBED_CHUNK = 64;
/**
 * After this long without index writes, tables written since their last compaction are
 * optimized, which also folds the new rows into the full-text and vector indices (rows
 * outside an index are scanned at every search).
 */
const IDLE_OPTIMIZE_MS = 5_000;
/** How long a small text batch waits for company before it is committed. */
const COALESCE_MS = 25;
const KEEP_VERSIONS_MS = 60_000;
/** How often the lease is renewed and the outbox checked for rows other processes wrote. */
const LEASE_POLL_MS = 1_000;

/** Progress of the index, for status routes and the CLI. */
export interface IndexerStats {
  pendingText: number;
  pendingVector: number;
  vectorSpace: string | null;
  vectorDimension: number | null;
  lastIndexedAt: string | null;
  leaseHeld: boolean;
}

/**
 * Drains the outbox into LanceDB: first the text stage (items table, full-text index),
 * then the vector stage (embeddings). One delete and one add per batch; compaction keeps
 * fragment counts bounded. Only the holder of the `indexer` lease writes.
 */
export class Indexer {
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private waiters: Array<{ seq: number; resolve: () => void }> = [];
  private timers = new Set<ReturnType<typeof setTimeout>>();
  private leaseTimer: ReturnType<typeof setInterval> | null = null;
  /** After a restart the last batch may have reached LanceDB already: replace, never append. */
  private replaySafe = true;
  private dirtyTables = new Set<string>();
  private lastIndexedAt: string | null = null;
  /** A background vector-index build; the vector stage pauses while it runs. */
  private vectorIndexBuild: Promise<void> | null = null;
  private embedderDown = false;
  /** One warning per outage, not one per retry. */
  private embedderWarned = false;
  private wake: (() => void) | null = null;
  private idleTimer: ReturnType<typeof setTimeout> | null = null;
  /** Commits (each a new fragment) per table since it was last compacted. */
  private commitsSinceCompaction = new Map<string, number>();

  constructor(private readonly o: IndexerOptions) {}

  get vectorDimension(): number | null {
    const value = this.o.settings.get("vector_dimension");
    return value ? Number(value) : null;
  }

  /** The LanceDB table that holds vectors of the current space, once one exists. */
  get vectorTable(): string | null {
    const dimension = this.vectorDimension;
    return this.o.embedder && dimension ? vectorTableName(this.o.embedder.spaceId, dimension) : null;
  }

  /** Takes the lease (or waits for it) and starts draining. */
  async start(): Promise<void> {
    this.leaseTimer = setInterval(() => void this.tickLease(), LEASE_POLL_MS);
    await this.tickLease();
  }

  private async tickLease(): Promise<void> {
    if (this.stopped) return;
    const wasHeld = this.o.lease.held;
    if (!this.o.lease.tryAcquire()) {
      if (wasHeld) this.o.log.warn("indexer lease lost to another process; pausing index writes");
      return;
    }
    if (!wasHeld) {
      // Another process may have rebuilt the index while we waited.
      await this.o.lance.reopen();
      this.replaySafe = true;
      await this.reconcileSchema();
      await this.reconcileVectorSpace();
      this.kick();
    } else if (!this.running && this.o.outbox.pendingTextSeq() !== null) {
      // The CLI (another process) may have queued work, e.g. a rebuild.
      this.kick();
    }
  }

  /** An index written by an older layout is rebuilt from SQLite. */
  private async reconcileSchema(): Promise<void> {
    const hasIndex = (await this.o.lance.tableNames()).length > 0;
    const current = this.o.settings.get("index_schema") === INDEX_SCHEMA_VERSION;
    // An index of an older layout is rebuilt; so is a missing one (the index directory was
    // deleted) when SQLite holds records. A new data dir has neither: nothing to do.
    const hasRecords = !this.allSources()[Symbol.iterator]().next().done;
    const rebuild = (hasIndex ? !current : hasRecords) && this.o.outbox.pendingTextSeq("*") === null;
    this.o.db.transaction(() => {
      if (rebuild) this.o.outbox.enqueueRebuild();
      this.o.settings.set("index_schema", INDEX_SCHEMA_VERSION);
    }).immediate();
  }

  /** When the configured embedder changed, old vectors are dropped and every source re-embedded. */
  private async reconcileVectorSpace(): Promise<void> {
    const space = this.o.embedder?.spaceId ?? "";
    if ((this.o.settings.get("vector_space") ?? "") === space) return;
    for (const name of await this.o.lance.tableNames()) if (name.startsWith("vectors_")) await this.o.lance.dropTable(name);
    let requeued = 0;
    // Queued re-embeds and the new space are recorded together: a crash cannot lose one.
    this.o.db.transaction(() => {
      for (const ref of space ? this.allSources() : []) {
        this.o.outbox.enqueue(ref, "insert", "vector");
        requeued++;
      }
      this.o.settings.set("vector_space", space);
      this.o.settings.set("vector_dimension", "");
    }).immediate();
    if (space) this.o.cache.dropOtherSpaces(space);
    if (requeued) this.o.log.info("vector space changed; re-embedding every source", { space, sources: requeued });
  }

  private *allSources(): Generator<SourceRef> {
    for (const source of this.o.sources.values()) yield* source.listAll();
  }

  /** Starts a drain unless one runs; a running drain will look again. */
  kick(): void {
    if (this.stopped || !this.o.lease.held) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pump()
      .catch((error) => {
        this.o.log.error("indexer failed; retrying in 1s", { error });
        this.later(1_000, () => this.kick());
      })
      .finally(() => {
        this.running = null;
        this.releaseWaiters(true);
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async pump(): Promise<void> {
    for (let coalesced = false; ; ) {
      if (this.stopped && this.waiters.length === 0) return;
      const text = this.o.outbox.nextBatch("text", this.o.batchSize);
      if (text.length) {
        // A trickle of writes would make a commit (and a fragment) each: gather a little
        // longer, unless a search is waiting for these rows.
        if (!coalesced && text.length < this.o.batchSize && this.waiters.length === 0 && !this.stopped) {
          await this.pause(COALESCE_MS);
          coalesced = true;
          continue;
        }
        coalesced = false;
        await this.processText(text);
        this.releaseWaiters(false);
        await this.compactIfNeeded(false);
        // Keep vectors moving during a long ingest: a small batch per text batch, so a
        // search arriving meanwhile waits at most one small embedding call.
        if (this.waiters.length === 0) await this.vectorBatch(EMBED_CHUNK);
        continue;
      }
      this.releaseWaiters(false);
      if (this.stopped) return;
      if (await this.vectorBatch(VECTOR_BATCH)) {
        await this.compactIfNeeded(false);
        continue;
      }
      await this.compactIfNeeded(false);
      await this.maybeBuildVectorIndex();
      if (!this.again) break;
      this.again = false;
    }
    this.scheduleDueVectors();
    if (this.dirtyTables.size) this.scheduleIdleOptimize();
  }

  /** Processes one vector batch when one is due; false when there was nothing to do. */
  private async vectorBatch(size: number): Promise<boolean> {
    if (!this.o.embedder || this.embedderDown || this.vectorIndexBuild) return false;
    const rows = this.o.outbox.nextBatch("vector", size);
    return rows.length > 0 && (await this.processVectors(rows));
  }

  /** Waits `ms`, or less when a search starts waiting for rows. */
  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }

  private scheduleIdleOptimize(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      void this.idleOptimize();
    }, IDLE_OPTIMIZE_MS);
  }

  private async processText(rows: OutboxRow[]): Promise<void> {
    if (rows.some((row) => row.op === "rebuild")) return this.rebuild();
    const { refs, deleteKeys } = this.plan(rows);
    const items = this.load(refs);
    await this.o.lance.replaceItems(deleteKeys, items.map(toIndexRow));
    this.noteCommit(ITEMS_TABLE);
    const seqs = rows.map((r) => r.seq);
    if (this.o.embedder) this.o.outbox.advanceToVector(seqs);
    else this.o.outbox.remove(seqs);
    this.replaySafe = false;
    this.lastIndexedAt = new Date().toISOString();
  }

  /** Embeds a batch; false (rows postponed) when the embedder cannot answer now. */
  private async processVectors(rows: OutboxRow[]): Promise<boolean> {
    const embedder = this.o.embedder!;
    const { refs, deleteKeys } = this.plan(rows);
    const items = this.load(refs);
    const vectors = new Map<string, Float32Array>();
    // Texts without a cached vector, by hash: each distinct text is embedded once.
    const missing = new Map<string, string>();
    for (const item of items) {
      const hash = textHash(item.text);
      if (vectors.has(hash) || missing.has(hash)) continue;
      const cached = this.o.cache.get(embedder.spaceId, hash);
      if (cached) vectors.set(hash, cached);
      else missing.set(hash, item.text);
    }
    const toEmbed = [...missing];
    try {
      for (let i = 0; i < toEmbed.length; i += EMBED_CHUNK) {
        const chunk = toEmbed.slice(i, i + EMBED_CHUNK);
        const embedded = await embedder.embed(chunk.map(([, text]) => text), "document");
        const entries = chunk.map(([hash], j) => [hash, embedded[j]] as [string, Float32Array]);
        this.o.cache.putMany(embedder.spaceId, entries);
        for (const [hash, vector] of entries) vectors.set(hash, vector);
      }
    } catch (error) {
      this.o.outbox.postpone(rows);
      // The local embedder explains its own state in one line; others are explained here.
      if (!this.embedderWarned && embedder.provider !== "local") {
        this.o.log.warn("embedder unavailable; vectors will be filled in later", { reason: (error as Error).message });
      }
      this.embedderWarned = true;
      this.embedderDown = true;
      return false;
    }
    const dimension = vectors.size ? vectors.values().next().value!.length : this.vectorDimension;
    if (dimension && this.vectorDimension !== dimension) this.o.settings.set("vector_dimension", String(dimension));
    if (dimension) {
      const table = vectorTableName(embedder.spaceId, dimension);
      const withVectors = items.map((item) => ({ ...toIndexRow(item), vector: vectors.get(textHash(item.text))! }));
      await this.o.lance.replaceVectors(table, dimension, deleteKeys, withVectors);
      this.noteCommit(table);
    }
    this.embedderWarned = false;
    this.o.outbox.remove(rows.map((r) => r.seq));
    this.lastIndexedAt = new Date().toISOString();
    return true;
  }

  /** Deduplicates a batch's sources; `insert`-only sources need no delete unless replaying. */
  private plan(rows: OutboxRow[]) {
    const bySource = new Map<string, { ref: SourceRef; needsDelete: boolean }>();
    for (const row of rows) {
      const ref = { ownerId: row.ownerId, kind: row.kind as SearchKind, sourceId: row.sourceId };
      const key = sourceKey(ref);
      const needsDelete = row.op !== "insert" || this.replaySafe || bySource.has(key);
      bySource.set(key, { ref, needsDelete: needsDelete || (bySource.get(key)?.needsDelete ?? false) });
    }
    const refs = [...bySource.values()].map((v) => v.ref);
    const deleteKeys = [...bySource.entries()].filter(([, v]) => v.needsDelete).map(([key]) => key);
    return { refs, deleteKeys };
  }

  private load(refs: SourceRef[]): SearchItem[] {
    const byKind = new Map<SearchKind, SourceRef[]>();
    for (const ref of refs) {
      const list = byKind.get(ref.kind);
      if (list) list.push(ref);
      else byKind.set(ref.kind, [ref]);
    }
    const items: SearchItem[] = [];
    for (const [kind, kindRefs] of byKind) {
      const source = this.o.sources.get(kind);
      if (!source) continue;
      for (const list of source.load(kindRefs).values()) items.push(...list);
    }
    return items;
  }

  /** Drops the index and re-enqueues every source, atomically with clearing the outbox. */
  private async rebuild(): Promise<void> {
    this.o.log.info("rebuilding the search index from SQLite");
    await this.o.lance.dropAll();
    this.o.db.transaction(() => {
      this.o.outbox.clear();
      for (const ref of this.allSources()) this.o.outbox.enqueue(ref, "insert");
      this.o.settings.set("vector_dimension", "");
    }).immediate();
    // Searches waiting for rows that were just re-enqueued wait for the new rows.
    const requeuedUpTo = this.o.outbox.pendingTextSeq();
    if (requeuedUpTo !== null) for (const waiter of this.waiters) waiter.seq = requeuedUpTo;
    this.replaySafe = false;
    this.embedderDown = false;
    this.dirtyTables.clear();
    this.commitsSinceCompaction.clear();
  }

  /** Starts the ANN index build once the vector table outgrows exact search. */
  private async maybeBuildVectorIndex(): Promise<void> {
    const table = this.vectorTable;
    if (!table || this.vectorIndexBuild || this.stopped) return;
    if ((await this.o.lance.countRows(table)) < this.o.vectorIndexMinRows || (await this.o.lance.hasVectorIndex(table))) return;
    this.o.log.info("building the vector index", { table });
    const started = Date.now();
    this.vectorIndexBuild = this.o.lance
      .createVectorIndex(table)
      .then(() => this.o.log.info("vector index ready", { table, seconds: (Date.now() - started) / 1000 }))
      .catch((error) => this.o.log.warn("vector index build failed; exact search continues", { error }))
      .finally(() => {
        this.vectorIndexBuild = null;
        this.kick();
      });
  }

  /** Resolves when no vector-index build is running (for benches and tests). */
  async vectorIndexSettled(): Promise<void> {
    while (this.vectorIndexBuild) await this.vectorIndexBuild;
  }

  private noteCommit(table: string): void {
    this.dirtyTables.add(table);
    this.commitsSinceCompaction.set(table, (this.commitsSinceCompaction.get(table) ?? 0) + 1);
  }

  /**
   * Compacts a table once it has taken `maxFragments` commits since its last compaction
   * (each `add` makes one fragment), even in the middle of an ingest, so the fragment
   * count stays bounded; `force` compacts every table written since.
   */
  private async compactIfNeeded(force: boolean): Promise<void> {
    for (const table of [...this.dirtyTables]) {
      // Compacting under a running index build would make it rebuild from the start.
      if (this.vectorIndexBuild && table.startsWith("vectors_")) continue;
      if (!force && (this.commitsSinceCompaction.get(table) ?? 0) < this.o.maxFragments) continue;
      await this.o.lance.optimize(table, KEEP_VERSIONS_MS);
      this.dirtyTables.delete(table);
      this.commitsSinceCompaction.set(table, 0);
    }
  }

  /**
   * Compacts every table written since its last compaction, as the running job (so no
   * drain writes meanwhile), folding new rows into the indices. With `onError`, a failure
   * is handled inside the job, so whoever awaits `running` never sees it.
   */
  private async optimizeWritten(onError?: (error: unknown) => void): Promise<void> {
    const job = this.compactIfNeeded(true);
    this.running = (onError ? job.catch(onError) : job).finally(() => {
      this.running = null;
    });
    await this.running;
  }

  /** After a quiet spell, compact and fold new rows into the indices. */
  private async idleOptimize(): Promise<void> {
    if (this.stopped || this.running || !this.o.lease.held || !this.dirtyTables.size) return;
    await this.optimizeWritten((error) => this.o.log.warn("index optimize failed", { error }));
    this.kick();
  }

  /** Runs the idle optimization now: every written table compacted and fully indexed. */
  async settle(): Promise<void> {
    await this.drain();
    if (this.running) await this.running;
    await this.optimizeWritten();
  }

  private scheduleDueVectors(): void {
    if (!this.o.embedder) return;
    const due = this.o.outbox.nextDueAt("vector");
    if (due === null) return;
    this.later(Math.max(50, due - Date.now()), () => {
      this.embedderDown = false;
      this.kick();
    });
  }

  private later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
  }

  private releaseWaiters(all: boolean): void {
    this.waiters = this.waiters.filter((w) => {
      if (all || !this.o.outbox.hasTextUpTo(w.seq)) {
        w.resolve();
        return false;
      }
      return true;
    });
  }

  /**
   * Read-your-writes: resolves once every text-stage change of this owner acknowledged
   * before the call (and any rebuild queued before it) is in the index. Resolves at once
   * when none is pending, or when this process does not hold the lease (the search then
   * sees what is indexed).
   */
  flush(ownerId?: string): Promise<void> {
    // A pending rebuild re-enqueues everyone's rows: wait for it too, rather than answer
    // from an index that is about to be emptied.
    const own = this.o.outbox.pendingTextSeq(ownerId);
    const rebuild = ownerId === undefined ? null : this.o.outbox.pendingTextSeq("*");
    const seq = own === null ? rebuild : rebuild === null ? own : Math.max(own, rebuild);
    if (seq === null || !this.o.lease.held || this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiters.push({ seq, resolve });
      this.wake?.();
      this.kick();
    });
  }

  /** Retries postponed vector rows now instead of at their backoff time. */
  retryPostponed(): void {
    this.o.outbox.retryPostponed();
    this.embedderDown = false;
    this.kick();
  }

  /** Waits until both stages are empty or the embedder is down (for the CLI and tests). */
  async drain(): Promise<void> {
    for (;;) {
      await this.flush();
      if (this.running) await this.running;
      await this.vectorIndexSettled();
      const counts = this.o.outbox.counts();
      if (counts.text === 0 && (counts.vector === 0 || this.embedderDown || !this.o.embedder)) return;
      this.embedderDown = false;
      this.kick();
      if (this.running) await this.running;
      if (this.embedderDown) return;
    }
  }

  stats(): IndexerStats {
    const counts = this.o.outbox.counts();
    return {
      pendingText: counts.text,
      pendingVector: counts.vector,
      vectorSpace: this.o.embedder?.spaceId ?? null,
      vectorDimension: this.vectorDimension,
      lastIndexedAt: this.lastIndexedAt,
      leaseHeld: this.o.lease.held,
    };
  }

  /** Finishes the text stage (so nothing acknowledged waits on a restart), then stops. */
  async stop(): Promise<void> {
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.wake?.();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    if (this.running) await this.running.catch(() => {});
    await this.vectorIndexSettled();
    if (this.o.lease.held) {
      for (let batch = this.o.outbox.nextBatch("text", this.o.batchSize); batch.length; batch = this.o.outbox.nextBatch("text", this.o.batchSize)) {
        await this.processText(batch);
      }
    }
    this.stopped = true;
    this.releaseWaiters(true);
    this.o.lease.release();
  }
}

function toIndexRow(item: SearchItem): IndexRow {
  return {
    source_key: sourceKey(item),
    owner_id: item.ownerId,
    kind: item.kind,
    source_id: item.sourceId,
    item_id: item.itemId,
    workspace_id: item.workspaceId,
    session_id: item.sessionId,
    document_type: item.documentType,
    meta: metaEntries(item.metadata),
    created_at: item.createdAtMs,
    text: item.text,
    context_before: item.contextBefore ?? "",
    context_after: item.contextAfter ?? "",
  };
}
