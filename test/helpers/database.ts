import { createHash } from "node:crypto";
import { hostname } from "node:os";
import pg from "pg";
import { openPostgresStore } from "../../src/db/store";
import { migrateAll } from "../../src/migrations";

/**
 * The PostgreSQL run of the suite: with `MNEMO_TEST_DATABASE_URL` set (by `npm test`),
 * every data dir a test creates gets its own fresh database on that server, named after
 * the dir, so restarts of a server on the same dir find the same records.
 */
export const TEST_DATABASE_URL = process.env.MNEMO_TEST_DATABASE_URL || undefined;

const hex = (text: string, length: number) => createHash("sha256").update(text).digest("hex").slice(0, length);

/**
 * Names carry their owner, the test process (a short host tag and its pid), so runs
 * sharing one PostgreSQL never drop each other's databases: cleanup drops only those of
 * this host whose pid is gone. `mnemo_t_<host 6>_<pid>_<dir 16>`: at most 39 characters,
 * within PostgreSQL's 63.
 */
const HOST_TAG = hex(hostname(), 6);
const NAME = /^mnemo_t_([0-9a-f]{6})_(\d+)_[0-9a-f]{16}$/;

export const databaseName = (dataDir: string) => `mnemo_t_${HOST_TAG}_${process.pid}_${hex(dataDir, 16)}`;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as { code?: string }).code === "EPERM";
  }
}

/**
 * Whether a test database was left by a run that is gone: one of this host whose owner
 * pid is no longer alive, or (`unowned`) one in the older name format without an owner.
 * A database of another host is never stale here: its own host cleans it.
 */
export function isStaleTestDatabase(name: string, options: { unowned?: boolean } = {}): boolean {
  const match = NAME.exec(name);
  if (!match) return Boolean(options.unowned) && name.startsWith("mnemo_t_");
  return match[1] === HOST_TAG && !alive(Number(match[2]));
}

/** Drops the test databases left by runs that are gone (see isStaleTestDatabase); returns their names. */
export async function dropStaleTestDatabases(
  client: pg.Client,
  options: { unowned?: boolean } = {},
): Promise<string[]> {
  const { rows } = await client.query<{ datname: string }>(
    "SELECT datname FROM pg_database WHERE datname LIKE 'mnemo\\_t\\_%'",
  );
  const stale = rows.map((row) => row.datname).filter((name) => isStaleTestDatabase(name, options));
  for (const name of stale) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  return stale;
}

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

let staleSwept: Promise<string[]> | undefined;
let template: Promise<string> | undefined;

/**
 * A database migrated once per test process, which every data dir's database is copied
 * from (`CREATE DATABASE … TEMPLATE`): a server's first start then finds every migration
 * applied, as a restart does, instead of running them all (0.25–0.55 s a database). Closed
 * to connections once migrated, so that no session on it can refuse a copy.
 */
async function migratedTemplate(client: pg.Client): Promise<string> {
  const name = `mnemo_t_${HOST_TAG}_${process.pid}_${hex("migrated template", 16)}`;
  await client.query(`CREATE DATABASE ${name}`);
  const store = openPostgresStore(urlWithDatabase(TEST_DATABASE_URL!, name), 2);
  await migrateAll(store);
  await store.close();
  await client.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
  return name;
}

/** The migrated database of this test process, made on the first call. */
function migratedOnce(client: pg.Client): Promise<string> {
  template ??= migratedTemplate(client);
  return template;
}

/**
 * The database URL for a data dir (created on first use, migrated unless `migrated: false`:
 * a test of a migration starts from an empty one), or undefined in the embedded run.
 */
export async function databaseUrlFor(
  dataDir: string,
  { migrated = true }: { migrated?: boolean } = {},
): Promise<string | undefined> {
  if (!TEST_DATABASE_URL) return undefined;
  const name = databaseName(dataDir);
  await admin(async (client) => {
    // Once per process: a `bun test` run directly (not through `npm test`) cleans up too.
    staleSwept ??= dropStaleTestDatabases(client).catch(() => []);
    await staleSwept;
    const source = migrated ? await migratedOnce(client) : "template1";
    try {
      await client.query(`CREATE DATABASE ${name} TEMPLATE ${source}`);
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
export async function databaseEnvFor(
  dataDir: string,
  options: { migrated?: boolean } = {},
): Promise<Record<string, string>> {
  const url = await databaseUrlFor(dataDir, options);
  // PostgreSQL storage refuses to start without a master key (client-key escrow); tests share a fixed one.
  return url ? { MNEMO_DATABASE_URL: url, SERVER_MASTER_KEY: TEST_MASTER_KEY } : {};
}

/** The master key of the PostgreSQL test run (never a real secret). */
export const TEST_MASTER_KEY = "7e57".repeat(16);

/**
 * Why PostgreSQL does not answer at `url` (null when it does); on the way, databases left by
 * interrupted earlier runs are dropped (a concurrent run's, whose owner pid lives, stay).
 */
export async function postgresProblem(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await dropStaleTestDatabases(client, { unowned: true });
    return null;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}
