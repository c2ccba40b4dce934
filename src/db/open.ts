import { dataPaths } from "../data-paths";
import { openPostgresStore, openSqliteStore, type Store } from "./store";

/** The store of record a configuration names: PostgreSQL when a URL is given, else SQLite in the data dir. */
export function openStoreFor(storage: { databaseUrl?: string; databasePoolSize?: number }, dataDir: string): Store {
  return storage.databaseUrl
    ? openPostgresStore(storage.databaseUrl, storage.databasePoolSize ?? 10)
    : openSqliteStore(dataPaths(dataDir).sqlite);
}
