import type { Database } from "bun:sqlite";
import { createAuthService } from "./auth/service";
import { createCredentialsRepository } from "./auth/credentials-repository";
import { createCredentialsService } from "./auth/credentials-service";
import { createIdTokenVerifier } from "./auth/id-token";
import type { Config } from "./config";
import { createContextService } from "./context/service";
import { dataPaths } from "./data-paths";
import { allMigrations } from "./db/all-migrations";
import { createLease, createSettings } from "./db/leases";
import { migrate, openDatabase, writeTransaction } from "./db/sqlite";
import { createLogger, type Logger } from "./lib/log";
import { createMemoryRepository } from "./memories/repository";
import { memorySearchSource } from "./memories/search-source";
import { createMemoryService } from "./memories/service";
import { createProfileRepository } from "./profiles/repository";
import { createEmbeddingCache } from "./search/embedding-cache";
import { createEmbedder } from "./search/embedders";
import { createSearchEngine } from "./search/engine";
import { Indexer } from "./search/indexer";
import { LanceStore } from "./search/lance-store";
import { createOutbox } from "./search/outbox";
import type { SearchKind, SearchSource } from "./search/types";
import { createWorkspaceServices, openWorkspaceRepositories, workspaceSearchSources } from "./workspaces/compose";


/**
 * The composition root: opens the stores and wires every service. The server and the
 * CLI both start here; `close` drains the text stage and closes the stores.
 */
export async function openServices(config: Config, options: { log?: Logger; startIndexer?: boolean } = {}) {
  const log = options.log ?? createLogger(config.logLevel);
  const paths = dataPaths(config.dataDir);
  const db: Database = openDatabase(paths.sqlite);
  migrate(db, allMigrations);
  const transaction = <T>(fn: () => T): T => writeTransaction(db, fn);

  const lance = await LanceStore.open(paths.lance, { indexMb: config.indexer.indexCacheMb, metadataMb: Math.max(16, config.indexer.indexCacheMb >> 2) });
  const embedder = await createEmbedder(config.embeddings, log);
  const outbox = createOutbox(db);
  const settings = createSettings(db);

  const memoryRepo = createMemoryRepository(db);
  const workspaceRepos = openWorkspaceRepositories(db);
  const sources = new Map<SearchKind, SearchSource>([["memory", memorySearchSource(memoryRepo)], ...workspaceSearchSources(workspaceRepos)]);

  const indexer = new Indexer({
    db, outbox, lance, sources, embedder, settings, log,
    cache: createEmbeddingCache(db),
    lease: createLease(db, "indexer", 20_000),
    batchSize: config.indexer.batchSize,
    maxFragments: config.indexer.maxFragments,
    vectorIndexMinRows: config.indexer.vectorIndexMinRows,
  });
  const engine = createSearchEngine({ lance, indexer, embedder, log, queryEmbedTimeoutMs: 2_000 });

  const credentialsRepo = createCredentialsRepository(db);
  const auth = createAuthService({
    credentials: credentialsRepo,
    verifyIdToken: createIdTokenVerifier(config.idp),
    allowMockTokens: config.allowMockTokens,
    log,
  });

  const services = {
    config,
    log,
    db,
    lance,
    embedder,
    outbox,
    indexer,
    engine,
    sources,
    transaction,
    auth,
    credentials: createCredentialsService(credentialsRepo),
    profiles: createProfileRepository(db),
    memories: createMemoryService({ repo: memoryRepo, outbox, engine, transaction }),
    context: createContextService(engine),
    ...createWorkspaceServices({ repos: workspaceRepos, outbox, engine, indexer, lance, embedder, transaction }),
    async close() {
      await indexer.stop();
      await embedder?.close?.();
      lance.close();
      db.close();
    },
  };
  if (options.startIndexer !== false) await indexer.start();
  return services;
}
export type Services = Awaited<ReturnType<typeof openServices>>;
