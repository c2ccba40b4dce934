import type { Migration } from "./sqlite";
import { coreMigrations } from "./migrations";

/** Every migration of every domain; `migrate` orders them by id. */
export const allMigrations: Migration[] = [...coreMigrations];
