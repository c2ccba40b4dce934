import type { Migration } from "./migrate";
import { coreMigrations } from "./migrations";
import { chatMigrations } from "../chats/migrations";
import { documentMigrations } from "../documents/migrations";
import { searchMigrations } from "../search/migrations";
import { workspaceMigrations } from "../workspaces/migrations";

/** Every migration of every domain; `migrate` orders them by id. */
export const allMigrations: Migration[] = [...coreMigrations, ...searchMigrations, ...workspaceMigrations, ...documentMigrations, ...chatMigrations];
