import { createAppSessions } from "./auth/app-sessions";
import { createCredentialsRepository } from "./auth/credentials-repository";
import { createCredentialsService } from "./auth/credentials-service";
import { recordStoreConfig } from "./config";
import { openStoreFor } from "./db/open";
import { migrateAll } from "./migrations";

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
