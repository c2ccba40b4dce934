import { createCredentialsRepository } from "./auth/credentials-repository";
import { createCredentialsService } from "./auth/credentials-service";
import { resolveDataDir } from "./config";
import { migrateAll } from "./migrations";
import { openStoreForDataDir } from "./db/open";

/**
 * Just the store of record, for CLI commands that touch no index (keys, tokens): no
 * LanceDB, no embedder, safe to run beside a live server (SQLite WAL, or the shared
 * PostgreSQL named by MNEMO_DATABASE_URL).
 */
export async function openRecordStore(dataDirOption?: string) {
  const dataDir = resolveDataDir(dataDirOption);
  const store = await migrateAll(openStoreForDataDir(dataDir, process.env));
  return {
    dataDir,
    store,
    credentials: createCredentialsService({ repo: createCredentialsRepository(), store }),
    close: () => store.close(),
  };
}
