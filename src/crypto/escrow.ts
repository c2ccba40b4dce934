import type { Executor, Store } from "../db/store";
import { formatSealed, openBytes, parseSealed, sealBytes } from "./aes-gcm";
import { KEY_BYTES } from "./client-key";
import { createEscrowRepository, ESCROW_CHECK_KEY } from "./escrow-repository";
import { resealTagKey } from "./seal-tags";

/** Version tag of a stored escrow blob: `v1:iv_hex:tag_hex:ct_hex`. */
const BLOB_VERSION = "v1";
/** The check value's associated data: the name of its settings row. */
const CHECK_KEY = ESCROW_CHECK_KEY;
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

const sealCheck = (masterKey: Buffer) =>
  formatSealed(sealBytes(Buffer.from(CHECK_TEXT), masterKey, Buffer.from(CHECK_KEY)));
function checkOpens(value: string | null, masterKey: Buffer): boolean {
  if (value === null) return false;
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

/** What `set` did: a first key, the same key again (nothing written), or a replacement (`replace` only). */
export type EscrowOutcome = "escrowed" | "unchanged" | "replaced";

/**
 * `set` without `replace` on a user whose escrowed key differs: replacing it would leave
 * what was sealed with that key unreadable through escrow. `opens` is false when the
 * stored blob does not open (then the old key is lost to escrow already).
 */
export class EscrowReplaceRefused extends Error {
  constructor(
    readonly userId: string,
    readonly opens: boolean,
  ) {
    super(`user '${userId}' already has a different escrowed client key`);
    this.name = "EscrowReplaceRefused";
  }
}

export interface EscrowOptions {
  /**
   * Where a rotated master key can be read again: the candidates of the key's source
   * (`<data>/master.key`, and the `.new` file a rotation stages). Absent when the key
   * came from SERVER_MASTER_KEY: a running process cannot learn a new environment.
   */
  reloadKeys?: () => Buffer[];
}

/**
 * Client-key escrow: each user's client key sealed (AES-256-GCM) under the server master
 * key, with the user id as associated data. Nothing is escrowed without a master key:
 * the service cannot be built without one.
 *
 * A rotation (`mnemo escrow rotate-master`) by another process while this one runs is
 * noticed when the stored check value no longer opens under this process's key: a blob
 * that does not open, or any write, re-reads the key from its source (`reloadKeys`) and
 * adopts the one that opens the check value. Without a source to re-read, escrowed keys
 * do not open until a restart with the new key (the CLI refuses that rotation while a
 * server runs: see cli/commands/escrow.ts).
 */
export async function createEscrowService(store: Store, masterKey: Buffer, options: EscrowOptions = {}) {
  if (masterKey.length !== KEY_BYTES) throw new Error("the server master key must be 32 bytes");
  const repo = createEscrowRepository();
  let master = masterKey;
  // A different master key than the one the stored blobs were sealed with would make
  // every escrowed key unreadable: refuse to start rather than fail on each request.
  // (Insert-if-absent then re-read: replicas starting together all check the same row.)
  await repo.putCheckIfAbsent(store.db, sealCheck(master));
  if (!checkOpens(await repo.check(store.db), master)) {
    throw new Error(
      "the server master key (SERVER_MASTER_KEY or <data>/master.key) is not the one escrowed client keys were sealed with; " +
        "restore it, or rotate with `mnemo escrow rotate-master` using the old key",
    );
  }

  /**
   * Makes `master` the key the store's check value opens under, re-reading the key's
   * source after a rotation; false when no key at hand opens it.
   */
  function adoptKeyFor(check: string | null): boolean {
    if (checkOpens(check, master)) return true;
    const found = (options.reloadKeys?.() ?? []).find((candidate) => checkOpens(check, candidate));
    if (!found) return false;
    master = found;
    return true;
  }
  const rotatedAway = () =>
    new Error(
      "the master key escrowed client keys are sealed with was rotated by another process; restart this server with the new key",
    );

  return {
    /**
     * Escrows a user's client key. The same key again changes nothing; a different one is
     * refused (`EscrowReplaceRefused`) unless `replace`: what was sealed with the old key
     * could no longer be opened through escrow.
     */
    async set(
      userId: string,
      clientKey: Buffer,
      { replace = false }: { replace?: boolean } = {},
    ): Promise<EscrowOutcome> {
      if (clientKey.length !== KEY_BYTES) throw new Error("a client key is 32 bytes");
      return store.transaction(async (tx) => {
        if (!adoptKeyFor(await repo.lockCheck(tx))) throw rotatedAway();
        const row = await repo.get(tx, userId);
        if (row) {
          let current: Buffer | null = null;
          try {
            current = openEscrow(userId, row.wrapped_key, master);
          } catch {}
          if (current?.equals(clientKey)) return "unchanged";
          if (!replace) throw new EscrowReplaceRefused(userId, current !== null);
        }
        await repo.put(tx, userId, sealEscrow(userId, clientKey, master), new Date().toISOString());
        return row ? "replaced" : "escrowed";
      });
    },
    /** The user's client key, or null when none is escrowed. Throws when the blob does not open. */
    async get(userId: string): Promise<Buffer | null> {
      const row = await repo.get(store.db, userId);
      if (!row) return null;
      try {
        return openEscrow(userId, row.wrapped_key, master);
      } catch (error) {
        // Rotated meanwhile? The blob is re-read too: it may have been re-sealed after our read.
        const before = master;
        if (!adoptKeyFor(await repo.check(store.db)) || master === before) throw error;
        const again = await repo.get(store.db, userId);
        return again ? openEscrow(userId, again.wrapped_key, master) : null;
      }
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
     * The check row is locked first, so no escrow write can slip in between.
     */
    async rotateMaster(newKey: Buffer): Promise<{ rotated: number }> {
      if (newKey.length !== KEY_BYTES) throw new Error("the new master key must be 32 bytes");
      const rotated = await store.transaction(async (tx) => {
        if (!adoptKeyFor(await repo.lockCheck(tx))) throw rotatedAway();
        const rows = await repo.all(tx);
        const now = new Date().toISOString();
        for (const row of rows) {
          let clientKey: Buffer;
          try {
            clientKey = openEscrow(row.user_id, row.wrapped_key, master);
          } catch {
            throw new Error(
              `the escrowed key of user '${row.user_id}' does not open under the current master key; nothing was rotated`,
            );
          }
          await repo.put(tx, row.user_id, sealEscrow(row.user_id, clientKey, newKey), now);
        }
        await repo.putCheck(tx, sealCheck(newKey));
        // The seal tags' key is sealed under the master key too: it moves in the same transaction.
        await resealTagKey(tx, master, newKey);
        return rows.length;
      });
      master = newKey;
      return { rotated };
    },
  };
}
export type EscrowService = Awaited<ReturnType<typeof createEscrowService>>;

/** How many client keys are escrowed under the master key, over every user (`mnemo doctor` warns before a missing key file loses them). */
export function countEscrowedKeys(tx: Executor): Promise<number> {
  return createEscrowRepository().count(tx);
}
