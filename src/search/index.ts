/**
 * The search side, as the rest of the app sees it: this file is its one entry. Inside,
 * `query/` is the read path, `indexing/` the index writer (outbox, loop, compaction),
 * `lance/` the LanceDB adapter and `embedders/` the embedding providers; nothing outside
 * `src/search/` imports them (tests and benches aside, where they measure them).
 *
 * Importing this file loads no LanceDB and no embedding runtime: `createSearch` loads
 * them when a process builds the search side (the CLI's light commands never do).
 */
import type { Search, SearchDeps } from "./open-search";
import type { RecordsOf, SearchSources } from "./types";

export type {
  SearchFilters,
  SearchHit,
  SearchItem,
  SearchKind,
  SearchMode,
  SearchRequest,
  SearchResult,
  SearchSignal,
  HitSignals,
  SearchSource,
  SearchStrategy,
  SourceRef,
} from "./types";
export { groupByOwner, SEARCH_SIGNALS, sourceKey } from "./types";
export type { Search, SearchDeps } from "./open-search";
export type { SearchEngine, SearchResponse } from "./query/engine";
export { searchHeaders, type SearchTimings } from "./query/server-timing";
export {
  createOutbox,
  outboxBacklog,
  pendingFor,
  takePending,
  vectorRetriesWaiting,
  type Outbox,
  type OutboxOp,
  type SourcesOfKind,
} from "./indexing/outbox-repository";
export { createRecordingOutbox } from "./indexing/recording-outbox";
export type { IndexingControl } from "./indexing/control";
export { recordedIndexFailure, type IndexHealth } from "./indexing/index-health";
export { indexStatus } from "./indexing/write-failures";
export { searchCoreTables, searchMigrations } from "./indexing/migrations";
export { indexLocation, type LanceLocation } from "./lance/index-location";
export { INDEX_SCHEMA_VERSION } from "./lance/layout";
export type { Embedder } from "./embedders/embedder";
// The local embedding model's files, for `mnemo models` and `mnemo doctor` (no native code).
export { DEFAULT_HUB_URL, pullModel } from "./embedders/local/hub-download.ts";
export { installModelFromDir } from "./embedders/local/install-from-dir.ts";
export { type VectorsStatus, vectorsStatus } from "./embedders/vectors-status";
export { readVectorOutage } from "./indexing/vector-outage";
export { checkModelFiles, listModels } from "./embedders/local/model-files.ts";
export { DEFAULT_LOCAL_MODEL, getModelSpec } from "./embedders/local/model-registry.ts";

/** The index child process's work (the hidden `mnemo __index-child`), loaded when it runs. */
export async function runIndexChild(): Promise<void> {
  const child = await import("./lance/index-child");
  await child.runIndexChild();
}

/** The index writer's child process (the hidden `mnemo __index-writer`), loaded when it runs. */
export async function runWriterChild(): Promise<void> {
  const child = await import("./lance/writer-child");
  await child.runWriterChild();
}

/**
 * Builds the search side over the store of record: opens the index (LanceDB), the
 * embedder, the outbox and the index writer (not started: `indexing.start()`), and the
 * engine. Each kind's hits carry the rows its source reads back, typed.
 */
export async function createSearch<S extends SearchSources>(deps: SearchDeps<S>): Promise<Search<RecordsOf<S>>> {
  const { openSearch } = await import("./open-search");
  return openSearch(deps);
}
