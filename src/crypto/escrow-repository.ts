import { createSettings } from "../db/leases";
import { all, first, run, sql, type Executor } from "../db/store";

/** The settings row holding a value sealed under the master key, to notice a changed key at start. */
export const ESCROW_CHECK_KEY = "escrow:master-check";

/**
 * Rows of `client_key_escrow` (blobs only, never a key in the clear), and the settings row
 * that holds the check value sealed under the current master key.
 */
export function createEscrowRepository() {
  const settings = createSettings();
  const repo = {
    get: (tx: Executor, userId: string) =>
      first<{ wrapped_key: string; created_at: string; updated_at: string }>(
        tx,
        sql`SELECT wrapped_key, created_at, updated_at FROM client_key_escrow WHERE user_id = ${userId}`,
      ),
    put: (tx: Executor, userId: string, blob: string, now: string) =>
      run(
        tx,
        sql`INSERT INTO client_key_escrow (user_id, wrapped_key, created_at, updated_at) VALUES (${userId}, ${blob}, ${now}, ${now})
                  ON CONFLICT (user_id) DO UPDATE SET wrapped_key = ${blob}, updated_at = ${now}`,
      ),
    delete: (tx: Executor, userId: string) => run(tx, sql`DELETE FROM client_key_escrow WHERE user_id = ${userId}`),
    all: (tx: Executor) =>
      all<{ user_id: string; wrapped_key: string }>(
        tx,
        sql`SELECT user_id, wrapped_key FROM client_key_escrow ORDER BY user_id`,
      ),
    /** How many client keys are escrowed. */
    count: async (tx: Executor) =>
      Number((await first<{ n: number }>(tx, sql`SELECT COUNT(*) AS n FROM client_key_escrow`))?.n ?? 0),
    check: (tx: Executor) => settings.get(tx, ESCROW_CHECK_KEY),
    /**
     * The check value, its row locked until the transaction ends (a no-op write: SQLite has
     * no `FOR UPDATE`, and serializes writers anyway). Every escrow write takes this lock
     * first, so a write and a rotation never interleave: a key sealed under a master key
     * that a concurrent rotation has just replaced would never open again.
     */
    lockCheck: async (tx: Executor) => {
      await settings.lock(tx, ESCROW_CHECK_KEY);
      return repo.check(tx);
    },
    putCheck: (tx: Executor, value: string) => settings.set(tx, ESCROW_CHECK_KEY, value),
    /** Stores the check value unless one is there (insert-if-absent: replicas starting together all check the same row). */
    putCheckIfAbsent: (tx: Executor, value: string) => settings.setIfAbsent(tx, ESCROW_CHECK_KEY, value),
  };
  return repo;
}
export type EscrowRepository = ReturnType<typeof createEscrowRepository>;
