import { migrate, type Migration } from "./db/migrate";
import type { Store } from "./db/store";
import { storeCoreTables } from "./db/migrations";
import { chatMigrations } from "./chats/migrations";
import { encryptionMigrations, escrowCoreTables } from "./crypto/migrations";
import { documentMigrations } from "./documents/migrations";
import { fileMigrations } from "./files/migrations";
import { uploadMigrations } from "./uploads/migrations";
import { searchCoreTables, searchMigrations } from "./search";
import { workspaceMigrations } from "./workspaces/migrations";
import { memoryCoreTables, memoryMigrations } from "./memories/migrations";
import { formationMigrations } from "./formation/migrations";
import { usageMigrations } from "./usage/migrations";
import { rateLimitMigrations } from "./rate-limits/migrations";
import { authMigrations, credentialCoreTables } from "./auth/migrations";
import { profileCoreTables } from "./profiles/migrations";

/**
 * The first schema: one migration, applied under this id by every existing store, whose
 * tables each owner declares beside its other migrations.
 */
const coreMigration: Migration = {
  id: "0001_core",
  sql: [
    memoryCoreTables,
    searchCoreTables,
    credentialCoreTables,
    profileCoreTables,
    escrowCoreTables,
    storeCoreTables,
  ].join("\n"),
};

/** Every migration of every domain; `migrate` orders them by id. */
export const allMigrations: Migration[] = [
  coreMigration,
  ...memoryMigrations,
  ...searchMigrations,
  ...workspaceMigrations,
  ...documentMigrations,
  ...chatMigrations,
  ...fileMigrations,
  ...uploadMigrations,
  ...encryptionMigrations,
  ...usageMigrations,
  ...rateLimitMigrations,
  ...authMigrations,
  ...formationMigrations,
];

/** Brings a just-opened store up to date with every migration; closes it when one fails. */
export async function migrateAll(store: Store): Promise<Store> {
  try {
    await migrate(store, allMigrations);
  } catch (error) {
    await store.close().catch(() => {});
    throw error;
  }
  return store;
}
