import { createAuthService } from "./auth/service";
import { createCredentialsRepository } from "./auth/credentials-repository";
import { createCredentialsService } from "./auth/credentials-service";
import { createIdTokenVerifier } from "./auth/id-token";
import type { Config } from "./config";
import { migrateAll } from "./db/all-migrations";
import { openStoreFor } from "./db/open";
import type { Executor } from "./db/store";
import { serverSecret } from "./db/secrets";
import { createCursors } from "./lib/cursors";
import { createLogger, type Logger } from "./lib/log";
import { createScheduler } from "./lib/scheduler";
import { restrictNewFiles } from "./lib/owner-only";
import { createClientKeys } from "./crypto/client-keys";
import { createEscrowService } from "./crypto/escrow";
import { checkMasterKeyConfig, resolveMasterKey, rotatedKeyCandidates } from "./crypto/master-key";
import { createIdentityService } from "./identity/service";
import { createMemoryRepository } from "./memories/repository";
import { memorySearchSource } from "./memories/search-source";
import { createMemoryService } from "./memories/service";
import { createProfileRepository } from "./profiles/repository";
import { createSearch } from "./search";
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
  /** The one owner of background timers: the search side's (and, in time, every other background owner's). */
  const scheduler = createScheduler({ onError: (task, error) => log.warn("background task failed", { task, error }) });

  const memoryRepo = createMemoryRepository();
  const workspaceRepos = openWorkspaceRepositories();
  const fileRepo = createFileRepository();
  const search = await createSearch({
    config, store, log, scheduler,
    sources: { memory: memorySearchSource(memoryRepo), ...workspaceSearchSources(workspaceRepos), file: fileSearchSource(fileRepo) },
  });
  const { engine, outbox, indexing: indexer, embedder } = search;

  const credentialsRepo = createCredentialsRepository();
  const auth = createAuthService({
    store,
    credentials: credentialsRepo,
    verifyIdToken: createIdTokenVerifier(config.idp),
    allowMockTokens: config.allowMockTokens,
    log,
  });

  const fileNames = async (tx: Executor, ownerId: string, keys: string[]) => new Map((await fileRepo.getMany(tx, ownerId, keys)).map((f) => [f.key, f.name]));
  const workspaceServices = createWorkspaceServices({ repos: workspaceRepos, outbox, engine, indexer, embedder, store, cursors, fileNames });
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
    scheduler,
    search,
    embedder,
    outbox,
    indexer,
    engine,
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
      await search.stop();
      await scheduler.stop();
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
