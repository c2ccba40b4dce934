import type { Migration } from "../db/migrate";

/**
 * Extraction jobs of captured conversations: a row per captured exchange, claimed by the
 * replica that writes the index (one at a time, under a lease), retried with backoff, and
 * marked done in the transaction that applies its decisions (so a job run again after a
 * crash finds itself done) or failed after its last attempt.
 */
export const formationMigrations: Migration[] = [
  {
    id: "0530_formation_jobs",
    sql: `
      CREATE TABLE formation_jobs (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        owner_id TEXT NOT NULL,
        workspace_id TEXT,
        thread_workspace_id TEXT NOT NULL,
        thread_id TEXT NOT NULL,
        message_ids TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending',
        attempts INTEGER NOT NULL DEFAULT 0,
        available_at INTEGER NOT NULL DEFAULT 0,
        lease_until INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX formation_jobs_due ON formation_jobs (status, available_at);
      CREATE INDEX formation_jobs_by_owner ON formation_jobs (owner_id, seq);
    `,
  },
  {
    // A user's default for capture (PUT /v1/me/capture): whether a completion without X-Svc-Remember is captured.
    id: "0531_capture_settings",
    sql: `
      CREATE TABLE capture_settings (
        owner_id TEXT PRIMARY KEY,
        remember INTEGER NOT NULL,
        updated_at TEXT NOT NULL
      );
    `,
  },
  {
    // Jobs are named by a random id like every other record (the sequence stays internal: it
    // counted the server's jobs). Rows from before get one here; `random()` is the one random
    // source both engines share (an integer on SQLite, a fraction on PostgreSQL: its digits).
    // `captured` is 0 for a job recording a capture whose write failed: nothing of that exchange
    // was stored, so there is nothing to retry.
    id: "0535_formation_job_ids",
    sql: `
      ALTER TABLE formation_jobs ADD COLUMN id TEXT;
      ALTER TABLE formation_jobs ADD COLUMN captured INTEGER NOT NULL DEFAULT 1;
      UPDATE formation_jobs SET id = 'job_' || replace('' || abs(random()), '0.', '');
      CREATE UNIQUE INDEX formation_jobs_id ON formation_jobs (id);
    `,
  },
];
