import { all, first, list, run, sql, type Executor } from "../db/store";
import type { SealBinding, SealKind } from "./binding";

/** The settings row of the seal tag key (sealed under the master key). */
const TAG_KEY_ROW = "seal-tags:key";

/** Rows of `seal_tags` (one per stored field holding ciphertext) and the sealed tag key's settings row. */
export const sealTagRepository = {
  tagKey: async (tx: Executor) => (await first<{ value: string }>(tx, sql`SELECT value FROM settings WHERE key = ${TAG_KEY_ROW}`))?.value ?? null,
  putTagKey: (tx: Executor, sealed: string) =>
    run(tx, sql`INSERT INTO settings (key, value) VALUES (${TAG_KEY_ROW}, ${sealed}) ON CONFLICT (key) DO UPDATE SET value = ${sealed}`),
  /** Stores the sealed key unless one is there; true when this call stored it. */
  putTagKeyIfAbsent: async (tx: Executor, sealed: string) =>
    (await run(tx, sql`INSERT INTO settings (key, value) VALUES (${TAG_KEY_ROW}, ${sealed}) ON CONFLICT (key) DO NOTHING`)) > 0,
  put: (tx: Executor, b: SealBinding, tag: string) =>
    run(tx, sql`INSERT INTO seal_tags (owner_id, kind, record_id, field, tag) VALUES (${b.ownerId}, ${b.kind}, ${b.recordId}, ${b.field}, ${tag})
                ON CONFLICT (owner_id, kind, record_id, field) DO UPDATE SET tag = ${tag}`),
  delete: (tx: Executor, b: SealBinding) =>
    run(tx, sql`DELETE FROM seal_tags WHERE owner_id = ${b.ownerId} AND kind = ${b.kind} AND record_id = ${b.recordId} AND field = ${b.field}`),
  deleteRecord: (tx: Executor, ownerId: string, kind: SealKind, recordId: string) =>
    run(tx, sql`DELETE FROM seal_tags WHERE owner_id = ${ownerId} AND kind = ${kind} AND record_id = ${recordId}`),
  /** The tags of some records of one owner and kind (at most 500 ids a call). */
  ofRecords: (tx: Executor, ownerId: string, kind: SealKind, recordIds: string[]) =>
    all<{ record_id: string; field: string; tag: string }>(
      tx, sql`SELECT record_id, field, tag FROM seal_tags WHERE owner_id = ${ownerId} AND kind = ${kind} AND record_id IN ${list(recordIds)}`,
    ),
};
