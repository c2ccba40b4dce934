import { loadConfig, type Config } from "../config";
import { migrateAll } from "../migrations";
import { openStoreFor } from "../db/open";
import { createOutbox } from "../search";

/**
 * The store of record and its outbox, without LanceDB or an embedder: import and
 * export never touch the index (a running server, or the next start, drains the outbox).
 */
export async function openTransferStore(dataDir?: string, config: Config = loadConfig({ dataDir, logLevel: "warn" })) {
  const store = await migrateAll(openStoreFor(config.storage, config.dataDir));
  return { config, store, outbox: createOutbox(store), close: () => store.close() };
}
