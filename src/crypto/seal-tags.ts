import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { chunks, type Executor, type Store } from "../db/store";
import { formatSealed, isBoundString, isCiphertextString, openBytes, parseSealed, sealBytes } from "./aes-gcm";
import type { SealBinding, SealKind } from "./binding";
import { KEY_BYTES } from "./client-key";
import { sealTagRepository as repo } from "./seal-tags-repository";

/**
 * Seal tags: what keeps a value sealed with a client's key in the record and field it was
 * stored in, while the value itself stays in the contract's form (`iv:tag:ct`, AES-GCM
 * without associated data, which a client opens with its key alone).
 *
 * For each stored field holding ciphertext the server keeps, beside the record, an
 * HMAC-SHA256 under a key only the server holds, over the owner, the record (kind and id),
 * the field and every untagged ciphertext string inside the field's value (sorted). Before
 * the server opens a field's values with a client key it recomputes the tag: a value moved
 * to another record, field or user (or a field whose tag was removed) does not match, so
 * its values stay as stored and count as decrypt errors. Bound `v2:` values (an earlier
 * format: AES-GCM with the place as associated data) carry their place themselves and
 * need no tag.
 *
 * The tag key is 32 random bytes, stored sealed under the server master key (a master
 * key rotation re-seals it); whoever edits the database cannot compute a tag.
 */

const TAG_KEY_AAD = Buffer.from("mnemo.seal-tag-key.v1");
const TAG_CONTEXT = "mnemo.seal-tag.v1";
const MAX_DEPTH = 64;

/** The untagged ciphertext strings inside a stored value (a string, an envelope, or any nesting), sorted. */
export function untaggedCiphertexts(value: unknown): string[] {
  const found: string[] = [];
  const walk = (v: unknown, depth: number) => {
    if (depth > MAX_DEPTH) return;
    if (typeof v === "string") {
      if (isCiphertextString(v) && !isBoundString(v)) found.push(v);
    } else if (Array.isArray(v)) for (const item of v) walk(item, depth + 1);
    else if (typeof v === "object" && v !== null) for (const item of Object.values(v)) walk(item, depth + 1);
  };
  walk(value, 0);
  return found.sort();
}

/** The tag of a field's ciphertexts; the parts are NUL-separated (no id or ciphertext holds NUL). */
export function computeTag(tagKey: Buffer, binding: SealBinding, ciphertexts: readonly string[]): string {
  const head = [TAG_CONTEXT, binding.ownerId, binding.kind, binding.recordId, binding.field].join("\u0000");
  return createHmac("sha256", tagKey)
    .update([head, ...ciphertexts].join("\u0000"), "utf8")
    .digest("hex");
}

const tagsMatch = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a, "hex"), Buffer.from(b, "hex"));
const keyOf = (b: Pick<SealBinding, "kind" | "recordId" | "field">) => `${b.kind}\u0000${b.recordId}\u0000${b.field}`;

/** Seals the tag key under the master key (for the settings row and a rotation). */
export const sealTagKey = (tagKey: Buffer, masterKey: Buffer) =>
  formatSealed(sealBytes(tagKey, masterKey, TAG_KEY_AAD));
const openTagKey = (stored: string, masterKey: Buffer) => openBytes(parseSealed(stored), masterKey, TAG_KEY_AAD);

/** Re-seals the tag key from `oldMaster` to `newMaster` in `tx` (a master key rotation); nothing when there is none yet. */
export async function resealTagKey(tx: Executor, oldMaster: Buffer, newMaster: Buffer): Promise<void> {
  const stored = await repo.tagKey(tx);
  if (stored !== null) await repo.putTagKey(tx, sealTagKey(openTagKey(stored, oldMaster), newMaster));
}

/**
 * The tags of a store. `open` reads (or, the first time, creates) the tag key; a store that
 * had no tag key yet is one from before tags (or a new one): its stored fields are tagged
 * as found, in the same transaction (see `tagExisting`).
 */
export async function openSealTags(
  store: Store,
  masterKey: Buffer,
  tagExisting: (tx: Executor, tags: SealTags) => Promise<number>,
) {
  let created = false;
  const tags = await store.transaction(async (tx) => {
    // Insert-if-absent: replicas starting together agree on one key; the one that inserted it tags what exists.
    created = await repo.putTagKeyIfAbsent(tx, sealTagKey(randomBytes(KEY_BYTES), masterKey));
    const stored = await repo.tagKey(tx);
    if (stored === null) throw new Error("the seal tag key could not be stored");
    let tagKey: Buffer;
    try {
      tagKey = openTagKey(stored, masterKey);
    } catch {
      throw new Error(
        "the seal tag key in the store does not open under the server master key (SERVER_MASTER_KEY or <data>/master.key); restore the key it was sealed with",
      );
    }
    const made = createSealTags(tagKey);
    if (created) await tagExisting(tx, made);
    return made;
  });
  return { tags, created };
}

/** The tags of stored fields under one tag key; the SQL is in here, the callers pass their transaction. */
export function createSealTags(tagKey: Buffer) {
  if (tagKey.length !== KEY_BYTES) throw new Error("a seal tag key is 32 bytes");
  const tags = {
    /** Records the tag of a field as now stored (or forgets it when the field holds no untagged ciphertext). */
    async stamp(tx: Executor, binding: SealBinding, stored: unknown): Promise<void> {
      const ciphertexts = untaggedCiphertexts(stored);
      if (ciphertexts.length) await repo.put(tx, binding, computeTag(tagKey, binding, ciphertexts));
      else await repo.delete(tx, binding);
    },
    /** Forgets the tags of a deleted record. */
    async forget(tx: Executor, ownerId: string, kind: SealKind, recordId: string): Promise<void> {
      await repo.deleteRecord(tx, ownerId, kind, recordId);
    },
    /**
     * A check of fields against their stored tags, loaded in one query per kind: `(binding,
     * ciphertexts) => boolean`. A field without untagged ciphertext passes; one without a
     * stored tag, or whose tag differs, does not.
     */
    async checker(
      tx: Executor,
      bindings: readonly SealBinding[],
    ): Promise<(binding: SealBinding, ciphertexts: readonly string[]) => boolean> {
      const stored = new Map<string, string>();
      const byOwnerKind = new Map<string, { ownerId: string; kind: SealKind; ids: Set<string> }>();
      for (const b of bindings) {
        const group = byOwnerKind.get(`${b.ownerId}\u0000${b.kind}`) ?? {
          ownerId: b.ownerId,
          kind: b.kind,
          ids: new Set<string>(),
        };
        group.ids.add(b.recordId);
        byOwnerKind.set(`${b.ownerId}\u0000${b.kind}`, group);
      }
      for (const { ownerId, kind, ids } of byOwnerKind.values()) {
        for (const chunk of chunks([...ids])) {
          for (const row of await repo.ofRecords(tx, ownerId, kind, chunk))
            stored.set(`${ownerId}\u0000${keyOf({ kind, recordId: row.record_id, field: row.field })}`, row.tag);
        }
      }
      return (binding, ciphertexts) => {
        if (!ciphertexts.length) return true;
        const tag = stored.get(`${binding.ownerId}\u0000${keyOf(binding)}`);
        return tag !== undefined && tagsMatch(tag, computeTag(tagKey, binding, [...ciphertexts].sort()));
      };
    },
  };
  return tags;
}
export type SealTags = ReturnType<typeof createSealTags>;
/** A check of a field's ciphertexts against its stored tag (see `SealTags.checker`). */
export type TagCheck = Awaited<ReturnType<SealTags["checker"]>>;
