import { createAppSessions } from "./auth/app-sessions";
import { createAuthService } from "./auth/service";
import { createCredentialsRepository } from "./auth/credentials-repository";
import { createCredentialsService } from "./auth/credentials-service";
import { createIdTokenVerifier } from "./auth/id-token";
import { BlobStore, blobsLocation } from "./blobs/store";
import type { Config } from "./config";
import { createClientKeys } from "./crypto/client-keys";
import { createEscrowService } from "./crypto/escrow";
import { checkMasterKeyConfig, resolveMasterKey, rotatedKeyCandidates } from "./crypto/master-key";
import { openSealTags } from "./crypto/seal-tags";
import { openStoreFor } from "./db/open";
import { scheduleWalTruncate } from "./db/wal-truncate";
import { serverSecret } from "./db/secrets";
import type { Executor, Store } from "./db/store";
import { scheduleOrphanSweep } from "./files/orphan-sweep";
import { createPdfTextRunner } from "./files/pdf-text-runner";
import { createPresigner } from "./files/presign";
import { createFileRepository } from "./files/repository";
import { fileSearchSource } from "./files/search-source";
import { createFileService } from "./files/service";
import { createIdentityService } from "./identity/service";
import { createLogger, type Logger } from "./lib/log";
import { restrictNewFiles } from "./lib/owner-only";
import { createScheduler } from "./lib/scheduler";
import { createSessionRegistry, DEFAULT_SESSION_LIMITS } from "./mcp/sessions";
import { createMemoryHistoryRepository } from "./memories/history-repository";
import { createMemoryRepository } from "./memories/repository";
import { createFormationService } from "./formation";
import { createCapture } from "./formation/capture";
import { createCaptureSettingsRepository, createFormationJobRepository } from "./formation/jobs-repository";
import { memorySearchSource } from "./memories/search-source";
import { createMemoryService } from "./memories/service";
import { migrateAll } from "./migrations";
import { openKeyUsage, tagExistingSealedFields } from "./record-store";
import { createProfileRepository } from "./profiles/repository";
import { createProfileService } from "./profiles/service";
import { createRecordingOutbox, createSearch, type Outbox } from "./search";
import { createCursors } from "./shared/cursors";
import { createUploadRepository } from "./uploads/repository";
import { chatWorkspaceContents } from "./chats/workspace-purge";
import { documentWorkspaceContents } from "./documents/workspace-purge";
import { fileWorkspaceContents } from "./files/workspace-purge";
import { jobWorkspaceContents } from "./formation/workspace-purge";
import { memoryWorkspaceContents } from "./memories/workspace-purge";
import { createWorkspaceRemoval } from "./workspaces/removal";
import { createUploadService } from "./uploads/service";
import { createWebAppSessions } from "./web-app/sessions";
import { createCompletionServices } from "./composition/completion-services";
import {
  createWorkspaceServices,
  openWorkspaceRepositories,
  workspaceSearchSources,
} from "./composition/workspace-services";
import { backfillContentKeys } from "./memories/content-key-backfill";

/**
 * The composition root: the one place that opens the stores and wires every service,
 * for the server and the CLI alike. It owns the one scheduler of background work (the
 * orphan-blob sweep, MCP session expiry, the PDF text passes, the index writer's timers,
 * LanceDB's deferred handle closes); `close` cancels it first,
 * so nothing new starts, then drains what runs, stops the index writer (draining the
 * text stage) and closes the stores.
 */
export async function openServices(config: Config, options: { log?: Logger; startIndexer?: boolean } = {}) {
  const log = options.log ?? createLogger(config.logLevel);
  // Before anything is created: the data dir and all in it are owner-only (0700/0600).
  restrictNewFiles();
  // Checked before anything is created (PostgreSQL without SERVER_MASTER_KEY stops here); the
  // key file is made only once the store opened, so a refused start leaves no key behind.
  const masterKeyOptions = {
    configured: config.encryption.masterKey,
    dataDir: config.dataDir,
    postgres: !!config.storage.databaseUrl,
    log,
  };
  checkMasterKeyConfig(masterKeyOptions);
  const store = await migrateAll(openStoreFor(config.storage, config.dataDir));
  const masterKey = resolveMasterKey(masterKeyOptions);
  const scheduler = createScheduler({
    onError: (task, error) => log.warn("background task failed", { task, reason: (error as Error).message }),
  });

  const cursors = createCursors(await serverSecret(store, "cursors"));
  const memoryRepo = createMemoryRepository();
  // Memories stored before the exact-duplicate rule get their key (a page per transaction).
  await backfillContentKeys(store, memoryRepo, log);
  const workspaceRepos = openWorkspaceRepositories();
  const fileRepo = createFileRepository();
  const search = await createSearch({
    config,
    store,
    log,
    scheduler,
    sources: indexSources(memoryRepo, workspaceRepos, fileRepo),
  });
  const { engine, outbox, indexing: indexer, embedder } = search;

  const credentialsRepo = createCredentialsRepository();
  const credentials = createCredentialsService({ store, repo: credentialsRepo });
  // The web app's cookie sessions and sign-in links (src/web-app signs in and out; auth resolves the cookie).
  const appSessions = createAppSessions(store);
  const auth = createAuthService({
    store,
    credentials: credentialsRepo,
    verifyIdToken: await createIdTokenVerifier(config.idp),
    allowMockTokens: config.allowMockTokens,
    log,
    appSessions,
  });
  // A key kept in the data dir is re-read after a rotation by the CLI (see createEscrowService).
  const escrow = await createEscrowService(
    store,
    masterKey.key,
    masterKey.path ? { reloadKeys: () => rotatedKeyCandidates(masterKey.path!) } : {},
  );
  const clientKeys = createClientKeys(escrow, log);
  // The key of the seal tags beside values sealed with clients' keys; a store from before them is tagged as found, once.
  const { tags: sealTags, created: tagKeyCreated } = await openSealTags(store, masterKey.key, tagExistingSealedFields);
  if (tagKeyCreated) log.info("seal tags: created the tag key; stored fields holding ciphertext were tagged as found");
  const profileRepo = createProfileRepository();

  const fileNames = async (tx: Executor, ownerId: string, keys: string[]) =>
    new Map((await fileRepo.getMany(tx, ownerId, keys)).map((f) => [f.key, f.name]));
  const workspaceServices = createWorkspaceServices({
    repos: workspaceRepos,
    outbox,
    engine,
    indexer,
    embedder,
    store,
    cursors,
    fileNames,
    sealTags,
  });
  const { workspaces } = workspaceServices;
  // File bytes: a LanceDB connection of their own, which no reindex or rebuild touches.
  const blobs = await BlobStore.open(blobsLocation(config));
  const pdfText = createPdfTextRunner({ repo: fileRepo, blobs, store, outbox, log, scheduler });
  const uploadRepo = createUploadRepository();
  const files = createFileService({
    repo: fileRepo,
    blobs,
    presigner: createPresigner(await serverSecret(store, "presign")),
    outbox,
    workspaces,
    store,
    cursors,
    log,
    maxFileBytes: config.files.maxFileBytes,
    onTextPending: pdfText.wake,
    otherBlobHolders: [uploadRepo],
  });
  const uploads = createUploadService({
    repo: uploadRepo,
    files,
    blobs,
    workspaces,
    store,
    log,
    maxFileBytes: config.files.maxFileBytes,
  });
  scheduleOrphanSweep({
    files,
    isSweeper: () => indexer.isWriter,
    log,
    scheduler,
    everyMs: config.files.orphanSweepMs,
    minAgeMs: config.files.orphanAgeMs,
  });
  // Deleted text leaves the WAL within the bound (the index writer purges the index: search/indexing/index-purge.ts).
  if (store.truncateWal)
    scheduleWalTruncate({ truncate: store.truncateWal, scheduler, withinMs: config.storage.purgeWithinMs, log });
  const memoryHistory = createMemoryHistoryRepository();
  const memories = createMemoryService({
    repo: memoryRepo,
    history: memoryHistory,
    outbox,
    engine,
    store,
    cursors,
    workspaces,
  });
  // Capture needs memory formation, which needs the completions' upstream: bound once both exist.
  let capture: ReturnType<typeof createCapture> | null = null;
  const captureEnabled = !config.encryption.proxyMode || config.completions.extractionInProxyMode;
  const completionServices = createCompletionServices({
    config,
    store,
    engine,
    log,
    workspaces,
    documentsQuery: workspaceServices.documentsQuery,
    clientKeys,
    capture: {
      enabled: captureEnabled,
      record: (exchange) => capture?.record(exchange),
      rememberByDefault: (userId) => capture?.rememberByDefault(userId) ?? Promise.resolve(false),
    },
  });
  const formation = createFormationService({
    config,
    upstream: completionServices.upstream,
    admit: completionServices.admit,
    usage: completionServices.usage,
    memories,
    workspaces,
    store,
    log,
  });
  capture = createCapture({
    store,
    chats: workspaceRepos.chats,
    workspaces: workspaceRepos.workspaces,
    jobs: createFormationJobRepository(),
    settings: createCaptureSettingsRepository(),
    outbox,
    formation,
    scheduler,
    log,
    enabled: captureEnabled,
    isWorker: () => indexer.isWriter,
    backoffMs: config.completions.extractionRetryMs,
  });
  // Deleting a workspace: each domain purges its own part, in one transaction.
  const workspaceRemoval = createWorkspaceRemoval({
    store,
    repo: workspaceRepos.workspaces,
    artifacts: workspaceRepos.artifacts,
    log,
    contents: [
      documentWorkspaceContents(workspaceRepos.documents, workspaceRepos.view, outbox),
      chatWorkspaceContents(workspaceRepos.chats, outbox),
      fileWorkspaceContents({ repo: fileRepo, uploads: uploadRepo, blobs, outbox, log }),
      memoryWorkspaceContents(memoryRepo, memories.writes),
      jobWorkspaceContents,
    ],
  });
  const services = {
    config,
    log,
    store,
    search,
    embedder,
    outbox,
    indexer,
    engine,
    cursors,
    scheduler,
    auth,
    credentials,
    appSessions,
    webAppSessions: createWebAppSessions(auth, appSessions),
    profiles: createProfileService({ store, repo: profileRepo, escrow }),
    escrow,
    clientKeys,
    /** Seal tags of stored fields sealed with clients' keys (crypto/seal-tags.ts). */
    sealTags,
    identity: createIdentityService({
      auth,
      store,
      escrow,
      keyUsage: openKeyUsage(),
      log,
      profiles: profileRepo,
      webhooks: config.webhooks,
      credentials,
    }),
    memories,
    ...workspaceServices,
    workspaceRemoval,
    usage: completionServices.usage,
    models: completionServices.models,
    completions: completionServices.completions,
    /** Memory formation: extraction from conversations with the gateway's memory model. */
    formation,
    /** Captured conversations and their extraction jobs (X-Svc-Remember). */
    capture,
    blobs,
    files,
    uploads,
    /** Open MCP-over-HTTP sessions (bounded per user and by memory); their sweeper runs on the scheduler, and they close at `close`. */
    mcpSessions: createSessionRegistry(DEFAULT_SESSION_LIMITS, Date.now, scheduler),
    async close() {
      // Cancel first: no sweep, session expiry or PDF pass starts from here on.
      const drained = scheduler.stop();
      await services.mcpSessions.close();
      // Kills the PDF reader at work, so the drain below does not wait out its time budget.
      await pdfText.stop();
      await drained;
      // The index writer stops writing once the scheduler is stopped; this drains its text stage and closes LanceDB.
      await search.stop();
      blobs.close();
      await store.close();
    },
  };
  if (options.startIndexer !== false) {
    await indexer.start();
    pdfText.start();
    capture.start();
  }
  return services;
}
export type Services = Awaited<ReturnType<typeof openServices>>;

/**
 * The outbox of a process that writes records without the other services (`mnemo
 * import`): it analyses what it records for search as the server's does.
 */
export function recordingOutbox(store: Store): Outbox {
  return createRecordingOutbox(store, indexSources(), createLogger("warn"));
}

/** What the index is fed from, one source per kind. */
function indexSources(
  memoryRepo = createMemoryRepository(),
  workspaceRepos = openWorkspaceRepositories(),
  fileRepo = createFileRepository(),
) {
  return {
    memory: memorySearchSource(memoryRepo),
    ...workspaceSearchSources(workspaceRepos),
    file: fileSearchSource(fileRepo),
  };
}
