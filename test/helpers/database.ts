import { createHash } from "node:crypto";
import pg from "pg";

/**
 * The PostgreSQL run of the suite: with `MNEMO_TEST_DATABASE_URL` set (by `npm test`),
 * every data dir a test creates gets its own fresh database on that server, named after
 * the dir, so restarts of a server on the same dir find the same records.
 */
export const TEST_DATABASE_URL = process.env.MNEMO_TEST_DATABASE_URL || undefined;

export const databaseName = (dataDir: string) => `mnemo_t_${createHash("sha256").update(dataDir).digest("hex").slice(0, 20)}`;

function urlWithDatabase(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** The database URL for a data dir (created on first use), or undefined in the embedded run. */
export async function databaseUrlFor(dataDir: string): Promise<string | undefined> {
  if (!TEST_DATABASE_URL) return undefined;
  const name = databaseName(dataDir);
  await admin(async (client) => {
    try {
      await client.query(`CREATE DATABASE ${name}`);
    } catch (error) {
      // 42P04: it exists (a restart on the same data dir).
      if ((error as { code?: string }).code !== "42P04") throw error;
    }
  });
  return urlWithDatabase(TEST_DATABASE_URL, name);
}

/** Drops the data dir's database (when the test removes the dir). */
export async function dropDatabaseFor(dataDir: string): Promise<void> {
  if (!TEST_DATABASE_URL) return;
  await admin((client) => client.query(`DROP DATABASE IF EXISTS ${databaseName(dataDir)} WITH (FORCE)`));
}

/** The env additions that point a server or CLI process at the data dir's database. */
export async function databaseEnvFor(dataDir: string): Promise<Record<string, string>> {
  const url = await databaseUrlFor(dataDir);
  // PostgreSQL storage refuses to start without a master key (client-key escrow); tests share a fixed one.
  return url ? { MNEMO_DATABASE_URL: url, SERVER_MASTER_KEY: TEST_MASTER_KEY } : {};
}

/** The master key of the PostgreSQL test run (never a real secret). */
export const TEST_MASTER_KEY = "7e57".repeat(16);
