import { migrate, type Migration } from "./db/migrate";
import type { Store } from "./db/store";
import { coreMigrations } from "./db/migrations";
import { chatMigrations } from "./chats/migrations";
import { encryptionMigrations } from "./crypto/migrations";
import { documentMigrations } from "./documents/migrations";
import { fileMigrations } from "./files/migrations";
import { searchMigrations } from "./search";
import { workspaceMigrations } from "./workspaces/migrations";
import { memoryMigrations } from "./memories/migrations";
import { formationMigrations } from "./formation/migrations";
import { usageMigrations } from "./usage/migrations";
import { rateLimitMigrations } from "./rate-limits/migrations";
import { authMigrations } from "./auth/migrations";

/** Every migration of every domain; `migrate` orders them by id. */
export const allMigrations: Migration[] = [...coreMigrations, ...memoryMigrations, ...searchMigrations, ...workspaceMigrations, ...documentMigrations, ...chatMigrations, ...fileMigrations, ...encryptionMigrations, ...usageMigrations, ...rateLimitMigrations, ...authMigrations, ...formationMigrations];

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
