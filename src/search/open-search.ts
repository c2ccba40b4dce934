import type { Config } from "../config";
import { createLease, createSettings } from "../db/leases";
import type { Store } from "../db/store";
import type { Logger } from "../lib/log";
import type { Scheduler } from "../lib/scheduler";
import { createEmbedder } from "./embedders";
import type { Embedder } from "./embedders/embedder";
import { createContextFlags } from "./indexing/context-flags";
import type { IndexingControl } from "./indexing/control";
import { createEmbeddingCache } from "./indexing/embedding-cache-repository";
import { Indexer, LEASE_TTL_MS } from "./indexing/indexer";
import { createOutbox, type Outbox } from "./indexing/outbox-repository";
import { createTermStats } from "./indexing/term-stats";
import { indexLocation } from "./lance/index-location";
import { LanceStore } from "./lance/lance-store";
import { createSearchEngine, type SearchEngine } from "./query/engine";
import type { IndexView } from "./query/index-view";
import type { RecordsOf, SearchRecords, SearchSources } from "./types";

/** The longest a search waits for the query embedding before going full-text only. */
const QUERY_EMBED_TIMEOUT_MS = 2_000;

export interface SearchDeps<S extends SearchSources> {
  config: Config;
  store: Store;
  log: Logger;
  /** The app's one scheduler: the index writer's timers and LanceDB's deferred closes run on it. */
  scheduler: Scheduler;
  /** The domains that feed the index, one source per kind; each kind's hits carry its source's rows. */
  sources: S;
}

/** The search side, built: what the rest of the app uses of it. */
export interface Search<R extends SearchRecords> {
  /** The read path. */
  engine: SearchEngine<R>;
  /** The index writer, as the server, the CLI and status routes drive it. */
  indexing: IndexingControl;
  /** Where domains record their changes, in their own write transactions. */
  outbox: Outbox;
  /** The configured embedder (null: full-text only). */
  embedder: Embedder | null;
  /** Stops the index writer (its timers first, then it drains), then closes the embedder and LanceDB. */
  stop(): Promise<void>;
  /** The parts inside, for tests and benches that measure them; nothing in src/ or cli/ uses these. */
  internals: { lance: LanceStore; indexer: Indexer };
}

/**
 * Opens the index and wires the search side: the outbox, the index writer, and the
 * engine, which sees the writer only through an `IndexView` (query/index-view.ts).
 */
export async function openSearch<S extends SearchSources>({
  config,
  store,
  log,
  scheduler,
  sources,
}: SearchDeps<S>): Promise<Search<RecordsOf<S>>> {
  const lance = await LanceStore.open(indexLocation(config), {
    cache: { indexMb: config.indexer.indexCacheMb, metadataMb: Math.max(16, config.indexer.indexCacheMb >> 2) },
    maxOpenTables: config.indexer.maxOpenTables,
    scheduler,
  });
  const embedder = await createEmbedder(config.embeddings, log);
  const termStats = createTermStats({ sources, log });
  const outbox = createOutbox(store, termStats.refresh);
  const settings = createSettings();
  const contextFlags = createContextFlags(settings, store.db);
  const indexer = new Indexer({
    store,
    outbox,
    lance,
    sources,
    embedder,
    settings,
    log,
    contextFlags,
    scheduler,
    termStats,
    cache: createEmbeddingCache(store, { maxRows: config.indexer.embeddingCacheMax }),
    lease: createLease(store, "indexer", LEASE_TTL_MS),
    neverWrite: config.index.writer === "never",
    batchSize: config.indexer.batchSize,
    maxFragments: config.indexer.maxFragments,
    maxUnindexedRows: config.indexer.maxUnindexedRows,
    idleOptimizeMs: config.indexer.idleOptimizeMs,
    purgeWithinMs: config.storage.purgeWithinMs,
    vectorIndexMinRows: config.indexer.vectorIndexMinRows,
  });
  // The index writer's searches of memory tables read no column back (lance-store.ts).
  lance.useRowKeysWhile(() => indexer.writesIndex);
  const view: IndexView = {
    followWriter: () => indexer.followWriter(),
    vectorTable: (ownerId, group) => indexer.vectorTableFor(ownerId, group),
    writtenSinceIndexed: (table) => indexer.writtenSinceIndexed(table),
    hasContext: (table) => contextFlags.has(table),
    noteSearch: (table, held) => indexer.noteSearch(table, held),
  };
  const engine = createSearchEngine({
    store,
    lance,
    view,
    termStats,
    sources,
    embedder,
    log,
    queryEmbedTimeoutMs: QUERY_EMBED_TIMEOUT_MS,
  });
  return {
    engine,
    indexing: indexer,
    outbox,
    embedder,
    async stop() {
      await indexer.stop();
      await embedder?.close?.();
      await lance.close();
    },
    internals: { lance, indexer },
  };
}
