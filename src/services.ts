import { createAuthService } from "./auth/service";
import { createCredentialsRepository } from "./auth/credentials-repository";
import { createCredentialsService } from "./auth/credentials-service";
import { createIdTokenVerifier } from "./auth/id-token";
import type { Config } from "./config";
import { allMigrations } from "./db/all-migrations";
import { createLease, createSettings } from "./db/leases";
import { migrate } from "./db/migrate";
import { openStoreFor } from "./db/open";
import { serverSecret } from "./db/secrets";
import { createCursors } from "./lib/cursors";
import { createLogger, type Logger } from "./lib/log";
import { createMemoryRepository } from "./memories/repository";
import { memorySearchSource } from "./memories/search-source";
import { createMemoryService } from "./memories/service";
import { createProfileRepository } from "./profiles/repository";
import { createContextFlags } from "./search/context-flags";
import { createEmbeddingCache } from "./search/embedding-cache";
import { createEmbedder } from "./search/embedders";
import { createSearchEngine } from "./search/engine";
import { Indexer, LEASE_TTL_MS } from "./search/indexer";
import { LanceStore } from "./search/lance-store";
import { indexLocation } from "./search/index-location";
import { createOutbox } from "./search/outbox";
import type { SearchKind, SearchSource } from "./search/types";
import { createWorkspaceServices, openWorkspaceRepositories, workspaceSearchSources } from "./workspaces/compose";

/**
 * The composition root: opens the stores and wires every service. The server and the
 * CLI both start here; `close` stops the index writer (draining the text stage) and
 * closes the stores.
 */
export async function openServices(config: Config, options: { log?: Logger; startIndexer?: boolean } = {}) {
  const log = options.log ?? createLogger(config.logLevel);
  const store = openStoreFor(config.storage, config.dataDir);
  try {
    await migrate(store, allMigrations);
  } catch (error) {
    await store.close().catch(() => {});
    throw error;
  }

  const cursors = createCursors(await serverSecret(store, "cursors"));
  const lance = await LanceStore.open(indexLocation(config), {
    indexMb: config.indexer.indexCacheMb,
    metadataMb: Math.max(16, config.indexer.indexCacheMb >> 2),
  }, config.indexer.maxOpenTables);
  const embedder = await createEmbedder(config.embeddings, log);
  const outbox = createOutbox(store);
  const settings = createSettings();
  const contextFlags = createContextFlags(settings, store.db);

  const memoryRepo = createMemoryRepository();
  const workspaceRepos = openWorkspaceRepositories();
  const sources = new Map<SearchKind, SearchSource>([["memory", memorySearchSource(memoryRepo)], ...workspaceSearchSources(workspaceRepos)]);

  const indexer = new Indexer({
    store, outbox, lance, sources, embedder, settings, log, contextFlags,
    cache: createEmbeddingCache(store, { maxRows: config.indexer.embeddingCacheMax }),
    lease: createLease(store, "indexer", LEASE_TTL_MS),
    batchSize: config.indexer.batchSize,
    maxFragments: config.indexer.maxFragments,
    vectorIndexMinRows: config.indexer.vectorIndexMinRows,
  });
  const engine = createSearchEngine({
    store, lance, indexer, sources, embedder, log,
    queryEmbedTimeoutMs: 2_000,
    searchWaitMs: config.index.searchWaitMs,
    contextFlags,
  });

  const credentialsRepo = createCredentialsRepository();
  const auth = createAuthService({
    store,
    credentials: credentialsRepo,
    verifyIdToken: createIdTokenVerifier(config.idp),
    allowMockTokens: config.allowMockTokens,
    log,
  });

  const workspaceServices = createWorkspaceServices({ repos: workspaceRepos, outbox, engine, indexer, lance, embedder, store, cursors });
  const services = {
    config,
    log,
    store,
    lance,
    embedder,
    outbox,
    indexer,
    engine,
    sources,
    cursors,
    auth,
    credentials: createCredentialsService({ store, repo: credentialsRepo }),
    profiles: createProfileRepository(),
    memories: createMemoryService({ repo: memoryRepo, outbox, engine, store, cursors, workspaces: workspaceServices.workspaces }),
    ...workspaceServices,
    async close() {
      await indexer.stop();
      await embedder?.close?.();
      lance.close();
      await store.close();
    },
  };
  if (options.startIndexer !== false) await indexer.start();
  return services;
}
export type Services = Awaited<ReturnType<typeof openServices>>;
