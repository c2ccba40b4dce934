import { dataPaths } from "../data-paths";
import { openPostgresStore, openSqliteStore, type Store } from "./store";

/** The store of record a configuration names: PostgreSQL when a URL is given, else SQLite in the data dir. */
export function openStoreFor(storage: { databaseUrl?: string; databasePoolSize?: number }, dataDir: string): Store {
  return storage.databaseUrl ? openPostgresStore(storage.databaseUrl, storage.databasePoolSize ?? 10) : openSqliteStore(dataPaths(dataDir).sqlite);
}

/** For CLI commands that read only the environment (keys, tokens): the same choice from `MNEMO_DATABASE_URL`. */
export function openStoreForDataDir(dataDir: string, env: Record<string, string | undefined> = process.env): Store {
  return openStoreFor({ databaseUrl: env.MNEMO_DATABASE_URL || undefined, databasePoolSize: 2 }, dataDir);
}
