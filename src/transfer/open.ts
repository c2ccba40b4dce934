import { loadConfig, type Config } from "../config";
import { migrateAll } from "../migrations";
import { openStoreFor } from "../db/open";
import { createOutbox, type Outbox } from "../search";
import type { Store } from "../db/store";
import { checkMasterKeyConfig, resolveMasterKey } from "../crypto/master-key";
import { openSealTags } from "../crypto/seal-tags";
import { tagExistingSealedFields } from "../record-store";

/**
 * The store of record and its outbox, without LanceDB or an embedder: import and
 * export never touch the index (a running server, or the next start, drains the outbox).
 * `forImport`: with the seal tags too (they need the master key), for what an import writes;
 * `outbox`: one that records changes (an import's: see compose.ts `recordingOutbox`).
 */
export async function openTransferStore(
  dataDir?: string,
  config: Config = loadConfig({ dataDir, logLevel: "warn" }),
  { forImport = false, outbox }: { forImport?: boolean; outbox?: (store: Store) => Outbox } = {},
) {
  const masterKeyOptions = {
    configured: config.encryption.masterKey,
    dataDir: config.dataDir,
    postgres: !!config.storage.databaseUrl,
  };
  // Without a master key (PostgreSQL without SERVER_MASTER_KEY) no server runs on this store: nothing to tag for.
  const withKey = forImport && (!!config.encryption.masterKey || !config.storage.databaseUrl);
  if (withKey) checkMasterKeyConfig(masterKeyOptions);
  const store = await migrateAll(openStoreFor(config.storage, config.dataDir));
  // Imported sealed fields are tagged in their new place (crypto/seal-tags.ts), so they open through the server.
  const sealTags = withKey
    ? (await openSealTags(store, resolveMasterKey(masterKeyOptions).key, tagExistingSealedFields)).tags
    : undefined;
  return { config, store, outbox: outbox ? outbox(store) : createOutbox(store), sealTags, close: () => store.close() };
}
