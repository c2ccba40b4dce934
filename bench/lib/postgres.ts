/**
 * PostgreSQL for the backend comparison of `npm run bench`: a reachability check, and a
 * fresh database per run (`mnemo_bench_<random>`) that is dropped afterwards, also when
 * the bench is interrupted (through `psql`, when it is installed).
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { onCleanup } from "./harness";

/** The server the bench uses unless `--postgres-url` or MNEMO_BENCH_POSTGRES_URL says otherwise. */
export const DEFAULT_POSTGRES_URL =
  process.env.MNEMO_BENCH_POSTGRES_URL || "postgres://postgres@127.0.0.1:5432/postgres";

/** The URL without its password, for notes. */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparseable URL)";
  }
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  // A connection that breaks later must not crash the bench; the next query fails instead.
  client.on("error", () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Null when the server answers and may create databases; otherwise why not. */
export async function postgresUnavailable(adminUrl: string): Promise<string | null> {
  try {
    const { rows } = await withClient(adminUrl, (c) =>
      c.query<{ version: string; can: boolean }>(
        "SELECT current_setting('server_version') AS version, (SELECT rolcreatedb OR rolsuper FROM pg_roles WHERE rolname = current_user) AS can",
      ),
    );
    if (!rows[0]?.can) return "the role may not create databases";
    return null;
  } catch (error) {
    return (error as Error).message || String(error);
  }
}

/** `SHOW server_version` of the admin URL's server, for the report. */
export async function postgresVersion(adminUrl: string): Promise<string> {
  return withClient(
    adminUrl,
    async (c) => (await c.query<{ server_version: string }>("SHOW server_version")).rows[0].server_version,
  );
}

export interface BenchDatabase {
  name: string;
  /** The admin URL with the bench database as its path. */
  url: string;
  /** Rows still in the outbox (every stage): 0 once the index writer has caught up. */
  outboxRows(): Promise<number>;
  drop(): Promise<void>;
}

/** Creates `mnemo_bench_<random>` on the admin URL's server. */
export async function createBenchDatabase(adminUrl: string): Promise<BenchDatabase> {
  const name = `mnemo_bench_${randomBytes(6).toString("hex")}`;
  await withClient(adminUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const dropSql = `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`;
  const forget = onCleanup(() => {
    Bun.spawnSync(["psql", adminUrl, "-qc", dropSql], { stdout: "ignore", stderr: "ignore", timeout: 10_000 });
  });
  let reader: pg.Client | null = null;
  return {
    name,
    url: url.toString(),
    async outboxRows() {
      if (!reader) {
        reader = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 3_000 });
        reader.on("error", () => {});
        await reader.connect();
      }
      const { rows } = await reader.query<{ n: number }>("SELECT count(*)::int AS n FROM outbox");
      return rows[0].n;
    },
    async drop() {
      await reader?.end().catch(() => {});
      reader = null;
      await withClient(adminUrl, (c) => c.query(dropSql));
      forget();
    },
  };
}
