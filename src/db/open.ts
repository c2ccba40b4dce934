import { dataPaths } from "../data-paths";
import { StoreOpenError } from "./errors";
import { openPostgresStore, openSqliteStore, type Store } from "./store";

/** The store of record a configuration names: PostgreSQL when a URL is given, else SQLite in the data dir. */
export function openStoreFor(storage: { databaseUrl?: string; databasePoolSize?: number }, dataDir: string): Store {
  return storage.databaseUrl ? openPostgresStore(storage.databaseUrl, storage.databasePoolSize ?? 10) : openSqliteStore(dataPaths(dataDir).sqlite);
}

/** For CLI commands that read only the environment (keys, tokens): the same choice from `MNEMO_DATABASE_URL`. */
export function openStoreForDataDir(dataDir: string, env: Record<string, string | undefined> = process.env): Store {
  const databaseUrl = env.MNEMO_DATABASE_URL || undefined;
  // Checked as src/config.ts does, so a mistyped URL is named instead of failing as a DNS error; its password is never echoed.
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new StoreOpenError(`MNEMO_DATABASE_URL: '${databaseUrl.replace(/\/\/[^/@\s]*@/, "//…@")}' is not a postgres:// or postgresql:// URL`);
  }
  return openStoreFor({ databaseUrl, databasePoolSize: 2 }, dataDir);
}
