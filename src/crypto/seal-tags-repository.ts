import { createSettings } from "../db/leases";
import { all, list, run, sql, type Executor } from "../db/store";
import type { SealBinding, SealKind } from "./binding";

/** The settings row of the seal tag key (sealed under the master key). */
const TAG_KEY_ROW = "seal-tags:key";
const settings = createSettings();

/** Rows of `seal_tags` (one per stored field holding ciphertext) and the sealed tag key's settings row. */
export const sealTagRepository = {
  tagKey: (tx: Executor) => settings.get(tx, TAG_KEY_ROW),
  putTagKey: (tx: Executor, sealed: string) => settings.set(tx, TAG_KEY_ROW, sealed),
  /** Stores the sealed key unless one is there; true when this call stored it. */
  putTagKeyIfAbsent: async (tx: Executor, sealed: string) => (await settings.setIfAbsent(tx, TAG_KEY_ROW, sealed)) > 0,
  put: (tx: Executor, b: SealBinding, tag: string) =>
    run(
      tx,
      sql`INSERT INTO seal_tags (owner_id, kind, record_id, field, tag) VALUES (${b.ownerId}, ${b.kind}, ${b.recordId}, ${b.field}, ${tag})
                ON CONFLICT (owner_id, kind, record_id, field) DO UPDATE SET tag = ${tag}`,
    ),
  delete: (tx: Executor, b: SealBinding) =>
    run(
      tx,
      sql`DELETE FROM seal_tags WHERE owner_id = ${b.ownerId} AND kind = ${b.kind} AND record_id = ${b.recordId} AND field = ${b.field}`,
    ),
  deleteRecord: (tx: Executor, ownerId: string, kind: SealKind, recordId: string) =>
    run(tx, sql`DELETE FROM seal_tags WHERE owner_id = ${ownerId} AND kind = ${kind} AND record_id = ${recordId}`),
  /** The tags of some records of one owner and kind (at most 500 ids a call). */
  ofRecords: (tx: Executor, ownerId: string, kind: SealKind, recordIds: string[]) =>
    all<{ record_id: string; field: string; tag: string }>(
      tx,
      sql`SELECT record_id, field, tag FROM seal_tags WHERE owner_id = ${ownerId} AND kind = ${kind} AND record_id IN ${list(recordIds)}`,
    ),
};
