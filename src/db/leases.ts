import { hostname } from "node:os";
import { first, run, sql, type Executor, type Store } from "./store";

/**
 * A named lease in the store of record: at most one live holder at a time across
 * processes and replicas. The holder renews it well within its time to live; a holder
 * that died stops renewing, and another takes over once the lease expires. Times are
 * the database's own clock, so replicas' clocks need not agree.
 */
export function createLease(store: Store, name: string, ttlMs: number) {
  // On PostgreSQL the lease row only names the holder (for `/health`); who holds it is
  // decided by an advisory lock that dies with its holder's connection.
  const sessionLock = store.sessionLock(lockKey(name));
  // On the embedded store every process shares one machine, so a holder whose process
  // is gone is known to be dead at once (a restart resumes immediately). Replicas on
  // PostgreSQL share no machine: only expiry decides there.
  const local = store.dialect === "sqlite";
  const holder = local
    ? `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`
    : `replica-${crypto.randomUUID()}`;
  let held = false;
  const now = () => databaseNow(store);
  return {
    holder,
    get held() {
      return held;
    },
    /** Takes or renews the lease; false while another live holder has it. */
    async tryAcquire(): Promise<boolean> {
      if (sessionLock) {
        held = await sessionLock.tryHold();
        if (held) {
          await run(
            store.db,
            sql`INSERT INTO leases (name, holder, expires_at) VALUES (${name}, ${holder}, ${now()} + ${ttlMs})
                                  ON CONFLICT (name) DO UPDATE SET holder = ${holder}, expires_at = ${now()} + ${ttlMs}`,
          );
        }
        return held;
      }
      if (local) await releaseIfHolderDied(store.db, name);
      const changed = await run(
        store.db,
        sql`INSERT INTO leases (name, holder, expires_at) VALUES (${name}, ${holder}, ${now()} + ${ttlMs})
            ON CONFLICT (name) DO UPDATE SET holder = ${holder}, expires_at = ${now()} + ${ttlMs}
            WHERE leases.holder = ${holder} OR leases.expires_at < ${now()}`,
      );
      held = changed > 0;
      return held;
    },
    async release(): Promise<void> {
      if (held) await run(store.db, sql`DELETE FROM leases WHERE name = ${name} AND holder = ${holder}`);
      held = false;
      await sessionLock?.release();
    },
    /** Marks the lease lost without touching the store (it could not be renewed). */
    forget(): void {
      held = false;
      void sessionLock?.release();
    },
    /** The live holder, if any (this process included). */
    async currentHolder(): Promise<string | null> {
      return liveLeaseHolder(store, name);
    },
  };
}
export type Lease = ReturnType<typeof createLease>;

/** The database's clock in ms: replicas' own clocks need not agree. */
const databaseNow = (store: Store) =>
  store.dialect === "postgres"
    ? sql`(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint`
    : sql`CAST(unixepoch('subsec') * 1000 AS INTEGER)`;

/** The live holder of a named lease, if any: what `mnemo doctor` reads without taking part. */
export async function liveLeaseHolder(store: Store, name: string): Promise<string | null> {
  const row = await first<{ holder: string }>(
    store.db,
    sql`SELECT holder FROM leases WHERE name = ${name} AND expires_at >= ${databaseNow(store)}`,
  );
  return row?.holder ?? null;
}

/** A stable 31-bit advisory-lock key per lease name. */
function lockKey(name: string): number {
  let hash = 7_270_000;
  for (const char of name) hash = (hash * 31 + char.charCodeAt(0)) | 0;
  return Math.abs(hash);
}

/** Frees the lease of a holder on this host whose process is gone (embedded store only). */
async function releaseIfHolderDied(db: Executor, name: string): Promise<void> {
  const row = await first<{ holder: string }>(db, sql`SELECT holder FROM leases WHERE name = ${name}`);
  if (!row) return;
  const [host, pid] = row.holder.split(":");
  if (host !== hostname() || !pid || Number(pid) === process.pid || processAlive(Number(pid))) return;
  await run(db, sql`DELETE FROM leases WHERE name = ${name} AND holder = ${row.holder}`);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Small key-value settings (e.g. the active vector space). */
export function createSettings() {
  return {
    async get(tx: Executor, key: string): Promise<string | null> {
      return (await first<{ value: string }>(tx, sql`SELECT value FROM settings WHERE key = ${key}`))?.value ?? null;
    },
    async set(tx: Executor, key: string, value: string): Promise<void> {
      await run(
        tx,
        sql`INSERT INTO settings (key, value) VALUES (${key}, ${value}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      );
    },
    /** Stores the value unless the key has one (replicas starting together agree on the first); how many rows it stored (0 or 1). */
    setIfAbsent(tx: Executor, key: string, value: string): Promise<number> {
      return run(tx, sql`INSERT INTO settings (key, value) VALUES (${key}, ${value}) ON CONFLICT (key) DO NOTHING`);
    },
    /** Locks the key's row until the transaction ends: a no-op write, as SQLite has no `FOR UPDATE` (and serializes writers anyway). */
    async lock(tx: Executor, key: string): Promise<void> {
      await run(tx, sql`UPDATE settings SET value = value WHERE key = ${key}`);
    },
  };
}
export type Settings = ReturnType<typeof createSettings>;
