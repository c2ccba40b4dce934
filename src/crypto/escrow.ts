import { all, first, run, sql, type Executor, type Store } from "../db/store";
import { formatSealed, openBytes, parseSealed, sealBytes } from "./aes-gcm";
import { KEY_BYTES } from "./client-key";

/** Version tag of a stored escrow blob: `v1:iv_hex:tag_hex:ct_hex`. */
const BLOB_VERSION = "v1";
/** Settings row holding a value sealed under the master key, to notice a changed key at start. */
const CHECK_KEY = "escrow:master-check";
const CHECK_TEXT = "mnemo escrow master key check v1";

/** Associated data binding a blob to its user: a blob copied to another user's row does not open. */
const aadFor = (userId: string) => Buffer.from(`mnemo-escrow-v1\u0000${userId}`, "utf8");

/** Seals a client key for `userId` under the master key. */
export function sealEscrow(userId: string, clientKey: Buffer, masterKey: Buffer): string {
  return `${BLOB_VERSION}:${formatSealed(sealBytes(clientKey, masterKey, aadFor(userId)))}`;
}

/** Opens an escrow blob of `userId`; throws when the master key, the user or any bit differs. */
export function openEscrow(userId: string, blob: string, masterKey: Buffer): Buffer {
  if (!blob.startsWith(`${BLOB_VERSION}:`)) throw new Error("unknown escrow blob version");
  const key = openBytes(parseSealed(blob.slice(BLOB_VERSION.length + 1)), masterKey, aadFor(userId));
  if (key.length !== KEY_BYTES) throw new Error("escrowed key has the wrong length");
  return key;
}

const sealCheck = (masterKey: Buffer) => formatSealed(sealBytes(Buffer.from(CHECK_TEXT), masterKey, Buffer.from(CHECK_KEY)));
function checkOpens(value: string, masterKey: Buffer): boolean {
  try {
    return openBytes(parseSealed(value), masterKey, Buffer.from(CHECK_KEY)).toString() === CHECK_TEXT;
  } catch {
    return false;
  }
}

export interface EscrowStatus {
  present: boolean;
  createdAt: string | null;
  updatedAt: string | null;
}

/** Rows of `client_key_escrow`; blobs only, never a key in the clear. */
const repo = {
  get: (tx: Executor, userId: string) =>
    first<{ wrapped_key: string; created_at: string; updated_at: string }>(tx, sql`SELECT wrapped_key, created_at, updated_at FROM client_key_escrow WHERE user_id = ${userId}`),
  put: (tx: Executor, userId: string, blob: string, now: string) =>
    run(tx, sql`INSERT INTO client_key_escrow (user_id, wrapped_key, created_at, updated_at) VALUES (${userId}, ${blob}, ${now}, ${now})
                ON CONFLICT (user_id) DO UPDATE SET wrapped_key = ${blob}, updated_at = ${now}`),
  delete: (tx: Executor, userId: string) => run(tx, sql`DELETE FROM client_key_escrow WHERE user_id = ${userId}`),
  all: (tx: Executor) => all<{ user_id: string; wrapped_key: string }>(tx, sql`SELECT user_id, wrapped_key FROM client_key_escrow ORDER BY user_id`),
  check: async (tx: Executor) => (await first<{ value: string }>(tx, sql`SELECT value FROM settings WHERE key = ${CHECK_KEY}`))?.value ?? null,
  putCheck: (tx: Executor, value: string) =>
    run(tx, sql`INSERT INTO settings (key, value) VALUES (${CHECK_KEY}, ${value}) ON CONFLICT (key) DO UPDATE SET value = ${value}`),
};

/**
 * Client-key escrow: each user's client key sealed (AES-256-GCM) under the server master
 * key, with the user id as associated data. Nothing is escrowed without a master key:
 * the service cannot be built without one.
 */
export async function createEscrowService(store: Store, masterKey: Buffer) {
  if (masterKey.length !== KEY_BYTES) throw new Error("the server master key must be 32 bytes");
  let master = masterKey;
  // A different master key than the one the stored blobs were sealed with would make
  // every escrowed key unreadable: refuse to start rather than fail on each request.
  // (Insert-if-absent then re-read: replicas starting together all check the same row.)
  await run(store.db, sql`INSERT INTO settings (key, value) VALUES (${CHECK_KEY}, ${sealCheck(master)}) ON CONFLICT (key) DO NOTHING`);
  if (!checkOpens((await repo.check(store.db))!, master)) {
    throw new Error(
      "the server master key (SERVER_MASTER_KEY or <data>/master.key) is not the one escrowed client keys were sealed with; " +
        "restore it, or rotate with `mnemo escrow rotate-master` using the old key",
    );
  }

  return {
    /** Escrows (or replaces) a user's client key. */
    async set(userId: string, clientKey: Buffer): Promise<void> {
      if (clientKey.length !== KEY_BYTES) throw new Error("a client key is 32 bytes");
      await repo.put(store.db, userId, sealEscrow(userId, clientKey, master), new Date().toISOString());
    },
    /** The user's client key, or null when none is escrowed. Throws when the blob does not open. */
    async get(userId: string): Promise<Buffer | null> {
      const row = await repo.get(store.db, userId);
      return row ? openEscrow(userId, row.wrapped_key, master) : null;
    },
    async status(userId: string): Promise<EscrowStatus> {
      const row = await repo.get(store.db, userId);
      return { present: row !== null, createdAt: row?.created_at ?? null, updatedAt: row?.updated_at ?? null };
    },
    /** Removes a user's escrowed key; false when there was none. */
    async remove(userId: string): Promise<boolean> {
      return (await repo.delete(store.db, userId)) > 0;
    },
    /**
     * Re-seals every escrowed key under `newKey` in one transaction: either all move or
     * none (a blob that does not open under the current key aborts it, naming the user).
     */
    async rotateMaster(newKey: Buffer): Promise<{ rotated: number }> {
      if (newKey.length !== KEY_BYTES) throw new Error("the new master key must be 32 bytes");
      const rotated = await store.transaction(async (tx) => {
        const rows = await repo.all(tx);
        const now = new Date().toISOString();
        for (const row of rows) {
          let clientKey: Buffer;
          try {
            clientKey = openEscrow(row.user_id, row.wrapped_key, master);
          } catch {
            throw new Error(`the escrowed key of user '${row.user_id}' does not open under the current master key; nothing was rotated`);
          }
          await repo.put(tx, row.user_id, sealEscrow(row.user_id, clientKey, newKey), now);
        }
        await repo.putCheck(tx, sealCheck(newKey));
        return rows.length;
      });
      master = newKey;
      return { rotated };
    },
  };
}
export type EscrowService = Awaited<ReturnType<typeof createEscrowService>>;
