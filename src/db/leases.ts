import type { Database } from "bun:sqlite";
import { hostname } from "node:os";

/**
 * A named lease in SQLite: at most one live holder at a time across processes. The
 * holder renews it; a crashed holder's lease simply expires.
 */
export function createLease(db: Database, name: string, ttlMs: number) {
  const holder = `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
  let held = false;
  return {
    holder,
    get held() {
      return held;
    },
    /** Takes or renews the lease; false while another live holder has it. */
    tryAcquire(now = Date.now()): boolean {
      releaseIfHolderDied(db, name);
      const result = db
        .query(
          `INSERT INTO leases (name, holder, expires_at) VALUES (?1, ?2, ?3)
           ON CONFLICT (name) DO UPDATE SET holder = ?2, expires_at = ?3
           WHERE leases.holder = ?2 OR leases.expires_at < ?4`,
        )
        .run(name, holder, now + ttlMs, now);
      held = result.changes > 0;
      return held;
    },
    release(): void {
      if (held) db.query("DELETE FROM leases WHERE name = ? AND holder = ?").run(name, holder);
      held = false;
    },
    /** Whether anyone (another process included) holds a live lease. */
    isTaken(now = Date.now()): boolean {
      return db.query("SELECT 1 FROM leases WHERE name = ? AND expires_at >= ?").get(name, now) !== null;
    },
  };
}
export type Lease = ReturnType<typeof createLease>;

/**
 * A holder on this host whose process is gone (killed, crashed) cannot renew: free its
 * lease at once instead of waiting for it to expire, so a restart resumes immediately.
 */
function releaseIfHolderDied(db: Database, name: string): void {
  const row = db.query<{ holder: string }, [string]>("SELECT holder FROM leases WHERE name = ?").get(name);
  if (!row) return;
  const [host, pid] = row.holder.split(":");
  if (host !== hostname() || Number(pid) === process.pid || processAlive(Number(pid))) return;
  db.query("DELETE FROM leases WHERE name = ? AND holder = ?").run(name, row.holder);
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
export function createSettings(db: Database) {
  return {
    get: (key: string) => db.query<{ value: string }, [string]>("SELECT value FROM settings WHERE key = ?").get(key)?.value ?? null,
    set: (key: string, value: string) =>
      void db.query("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(key, value),
  };
}
export type Settings = ReturnType<typeof createSettings>;
