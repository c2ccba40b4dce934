import { createAuthService } from "./auth/service";
import { createCredentialsRepository } from "./auth/credentials-repository";
import { createCredentialsService } from "./auth/credentials-service";
import { createIdTokenVerifier } from "./auth/id-token";
import type { Config } from "./config";
import { migrateAll } from "./db/all-migrations";
import { createLease, createSettings } from "./db/leases";
import { openStoreFor } from "./db/open";
import type { Executor } from "./db/store";
import { serverSecret } from "./db/secrets";
import { createCursors } from "./lib/cursors";
import { createLogger, type Logger } from "./lib/log";
import { restrictNewFiles } from "./lib/owner-only";
import { createClientKeys } from "./crypto/client-keys";
import { createEscrowService } from "./crypto/escrow";
import { checkMasterKeyConfig, resolveMasterKey, rotatedKeyCandidates } from "./crypto/master-key";
import { createIdentityService } from "./identity/service";
import { createMemoryRepository } from "./memories/repository";
import { memorySearchSource } from "./memories/search-source";
import { createMemoryService } from "./memories/service";
import { createProfileRepository } from "./profiles/repository";
import { createContextFlags } from "./search/indexing/context-flags";
import { createEmbeddingCache } from "./search/indexing/embedding-cache";
import { createEmbedder } from "./search/embedders";
import { createSearchEngine } from "./search/query/engine";
import { Indexer, LEASE_TTL_MS } from "./search/indexing/indexer";
import { LanceStore } from "./search/lance/lance-store";
import { indexLocation } from "./search/lance/index-location";
import { createOutbox } from "./search/indexing/outbox";
import type { SearchKind, SearchSource } from "./search/types";
import { createCompletionServices } from "./completions/compose";
import { createWorkspaceServices, openWorkspaceRepositories, workspaceSearchSources } from "./workspaces/compose";
import { BlobStore, blobsLocation } from "./blobs/store";
import { createPresigner } from "./files/presign";
import { createFileRepository } from "./files/repository";
import { fileSearchSource } from "./files/search-source";
import { scheduleOrphanSweep } from "./files/orphan-sweep";
import { createFileService } from "./files/service";
import { createPdfTextRunner } from "./files/pdf-text-runner";
import { createUploadRepository } from "./uploads/repository";
import { createUploadService } from "./uploads/service";
import { createSessionRegistry, DEFAULT_SESSION_LIMITS } from "./mcp/sessions";

/**
 * The composition root: opens the stores and wires every service. The server and the
 * CLI both start here; `close` stops the index writer (draining the text stage) and
 * closes the stores.
 */
export async function openServices(config: Config, options: { log?: Logger; startIndexer?: boolean } = {}) {
  const log = options.log ?? createLogger(config.logLevel);
  // Before anything is created: the data dir and all in it are owner-only (0700/0600).
  restrictNewFiles();
  // Checked before anything is created (PostgreSQL without SERVER_MASTER_KEY stops here); the
  // key file is made only once the store opened, so a refused start leaves no key behind.
  const masterKeyOptions = { configured: config.encryption.masterKey, dataDir: config.dataDir, postgres: !!config.storage.databaseUrl, log };
  checkMasterKeyConfig(masterKeyOptions);
  const store = await migrateAll(openStoreFor(config.storage, config.dataDir));
  const masterKey = resolveMasterKey(masterKeyOptions);

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
  const fileRepo = createFileRepository();
  const sources = new Map<SearchKind, SearchSource>([["memory", memorySearchSource(memoryRepo)], ...workspaceSearchSources(workspaceRepos), ["file", fileSearchSource(fileRepo)]]);

  const indexer = new Indexer({
    store, outbox, lance, sources, embedder, settings, log, contextFlags,
    cache: createEmbeddingCache(store, { maxRows: config.indexer.embeddingCacheMax }),
    lease: createLease(store, "indexer", LEASE_TTL_MS),
    batchSize: config.indexer.batchSize,
    maxFragments: config.indexer.maxFragments,
    idleOptimizeMs: config.indexer.idleOptimizeMs,
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

  const fileNames = async (tx: Executor, ownerId: string, keys: string[]) => new Map((await fileRepo.getMany(tx, ownerId, keys)).map((f) => [f.key, f.name]));
  const workspaceServices = createWorkspaceServices({ repos: workspaceRepos, outbox, engine, indexer, lance, embedder, store, cursors, fileNames });
  // File bytes: a LanceDB connection of their own, which no reindex or rebuild touches.
  const blobs = await BlobStore.open(blobsLocation(config));
  const pdfText = createPdfTextRunner({ repo: fileRepo, blobs, store, outbox, log });
  const files = createFileService({
    repo: fileRepo, blobs, presigner: createPresigner(await serverSecret(store, "presign")), outbox, workspaces: workspaceServices.workspaces,
    store, cursors, log, maxFileBytes: config.files.maxFileBytes, onTextPending: pdfText.wake,
  });
  const uploads = createUploadService({ repo: createUploadRepository(), files, blobs, workspaces: workspaceServices.workspaces, store, log, maxFileBytes: config.files.maxFileBytes });
  const orphanSweep = scheduleOrphanSweep({
    files, isSweeper: () => indexer.isWriter, log, everyMs: config.files.orphanSweepMs, minAgeMs: config.files.orphanAgeMs,
  });
  // A key kept in the data dir is re-read after a rotation by the CLI (see createEscrowService).
  const escrow = await createEscrowService(store, masterKey.key, masterKey.path ? { reloadKeys: () => rotatedKeyCandidates(masterKey.path!) } : {});
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
    escrow,
    clientKeys: createClientKeys(escrow, log),
    identity: createIdentityService({
      auth, store, escrow, log, profiles: createProfileRepository(), webhooks: config.webhooks,
      credentials: createCredentialsService({ store, repo: credentialsRepo }),
    }),
    memories: createMemoryService({ repo: memoryRepo, outbox, engine, store, cursors, workspaces: workspaceServices.workspaces }),
    ...workspaceServices,
    ...createCompletionServices({ config, store, engine, log, workspaces: workspaceServices.workspaces, documentsQuery: workspaceServices.documentsQuery, clientKeys: createClientKeys(escrow, log) }),
    blobs,
    files,
    uploads,
    /** Open MCP-over-HTTP sessions (bounded per user and by memory); closed with their sweeper at `close`. */
    mcpSessions: createSessionRegistry(DEFAULT_SESSION_LIMITS),
    async close() {
      await services.mcpSessions.close();
      await orphanSweep.stop();
      await pdfText.stop();
      await indexer.stop();
      await embedder?.close?.();
      lance.close();
      blobs.close();
      await store.close();
    },
  };
  if (options.startIndexer !== false) {
    await indexer.start();
    pdfText.start();
  }
  return services;
}
export type Services = Awaited<ReturnType<typeof openServices>>;
