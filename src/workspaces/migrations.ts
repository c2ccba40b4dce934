import type { Migration } from "../db/migrate";

/** Workspaces and their per-workspace JSON artifacts (client block index, manifest, edges, notebook registry). */
export const workspaceMigrations: Migration[] = [
  {
    id: "0100_workspaces",
    sql: `
      CREATE TABLE workspaces (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        owner_id TEXT NOT NULL,
        id TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX workspaces_by_owner ON workspaces (owner_id, seq);

      -- One JSON value per (workspace, kind): what a client PUT (block index, vector
      -- manifest, block edges) or POSTed (the notebook registry), stored as sent.
      CREATE TABLE workspace_artifacts (
        owner_id TEXT NOT NULL,
        workspace_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        value TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (owner_id, workspace_id, kind)
      ) WITHOUT ROWID;
    `,
  },
];
