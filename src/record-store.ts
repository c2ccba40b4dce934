import { createAppSessions } from "./auth/app-sessions";
import { createCredentialsRepository } from "./auth/credentials-repository";
import { createCredentialsService } from "./auth/credentials-service";
import { messageSealedFields } from "./chats/sealed-fields-repository";
import { loadConfig, recordStoreConfig, resolveDataDir } from "./config";
import { createEscrowService } from "./crypto/escrow";
import { createKeyUsage } from "./crypto/key-usage";
import { checkMasterKeyConfig, resolveMasterKey } from "./crypto/master-key";
import { tagExistingFields } from "./crypto/seal-tags-existing";
import { openStoreFor } from "./db/open";
import { documentSealedFields } from "./documents/sealed-fields-repository";
import { migrateAll } from "./migrations";
import { createUsageRepository } from "./usage/repository";
import { createUsageService } from "./usage/service";
import { registrySealedFields } from "./workspaces/sealed-fields-repository";

/**
 * Just the store of record, for CLI commands that touch no index (keys, tokens): no
 * LanceDB, no embedder, safe to run beside a live server (SQLite WAL, or the shared
 * PostgreSQL named by MNEMO_DATABASE_URL).
 */
export async function openRecordStore(dataDirOption?: string) {
  const { dataDir, storage } = recordStoreConfig(dataDirOption);
  const store = await migrateAll(openStoreFor(storage, dataDir));
  return {
    dataDir,
    store,
    credentials: createCredentialsService({ repo: createCredentialsRepository(), store }),
    /** The web app's sign-in links (`mnemo open`) and sessions. */
    appSessions: createAppSessions(store),
    close: () => store.close(),
  };
}

/** The domains' records that may hold sealed values, as crypto reads them. */
export const SEALED_FIELD_SOURCES = {
  documents: documentSealedFields,
  chatMessages: messageSealedFields,
  notebookRegistries: registrySealedFields,
};

/** What a client key sealed, counted over the domains that hold sealed values (escrow asks before replacing a key). */
export function openKeyUsage() {
  return createKeyUsage(SEALED_FIELD_SOURCES);
}

/** Tags the sealed fields stored before seal tags existed, once, when the store gets its tag key. */
export const tagExistingSealedFields = tagExistingFields(Object.values(SEALED_FIELD_SOURCES));

/** The store of record and the usage service (`mnemo usage`): monthly tokens and per-user limits. */
export async function openUsageStore(dataDirOption?: string) {
  const record = await openRecordStore(dataDirOption);
  const config = loadConfig({ dataDir: record.dataDir });
  return {
    usage: createUsageService({
      store: record.store,
      repo: createUsageRepository(),
      defaultMonthlyLimit: config.completions.monthlyTokenLimit,
    }),
    close: () => record.close(),
  };
}

/**
 * The store of record and the escrow service under the configured master key
 * (SERVER_MASTER_KEY, else `<data>/master.key` on the embedded store), for `mnemo escrow`.
 * A key that cannot be read or opens nothing closes the store and leaves as `refused(message)`
 * (the CLI's one-line refusal); a bad configuration or store fails as itself.
 */
export async function openEscrowStore(dataDirOption: string | undefined, refused: (message: string) => Error) {
  const config = loadConfig({ dataDir: resolveDataDir(dataDirOption) });
  const keyOptions = {
    configured: config.encryption.masterKey,
    dataDir: config.dataDir,
    postgres: !!config.storage.databaseUrl,
  };
  // The key's configuration is checked before the store opens; the key file is made only after.
  checkMasterKeyConfig(keyOptions);
  const record = await openRecordStore(config.dataDir);
  try {
    const master = resolveMasterKey(keyOptions);
    return { record, master, escrow: await createEscrowService(record.store, master.key), keyUsage: openKeyUsage() };
  } catch (error) {
    await record.close();
    throw refused((error as Error).message);
  }
}
