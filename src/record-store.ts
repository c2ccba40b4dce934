import { createCredentialsRepository } from "./auth/credentials-repository";
import { createCredentialsService } from "./auth/credentials-service";
import { resolveDataDir } from "./config";
import { allMigrations } from "./db/all-migrations";
import { migrate, openDatabase } from "./db/sqlite";
import { dataPaths } from "./data-paths";

/**
 * Just the store of record, for CLI commands that touch no index (keys, tokens): no
 * LanceDB, no embedder, safe to run beside a live server (SQLite WAL).
 */
export function openRecordStore(dataDirOption?: string) {
  const dataDir = resolveDataDir(dataDirOption);
  const db = openDatabase(dataPaths(dataDir).sqlite);
  migrate(db, allMigrations);
  return {
    dataDir,
    db,
    credentials: createCredentialsService(createCredentialsRepository(db)),
    close: () => db.close(),
  };
}
