import { MESSAGE_TABLE, THREAD_TABLE } from "../chats";
import type { OwnedTable } from "../db/owned-tables";
import { DOCUMENT_TABLE, INDEX_VIEW_TABLE } from "../documents";
import { FILE_BLOCK_TABLE, FILE_TABLE } from "../files";
import { MEMORY_TABLE } from "../memories";
import { PROFILE_TABLE } from "../profiles";
import { ARTIFACT_TABLE, WORKSPACE_TABLE } from "../workspaces";

/** The version of the export format this Mnemo writes, and the newest it reads. */
export const EXPORT_FORMAT_VERSION = 1;

/**
 * The tables a user's export carries, in the order they are written and restored (a
 * workspace before what lives in it), each with the record `type` that names its rows
 * in the export. Which columns a table has is its repository's to say (`OwnedTable`).
 */
export interface TableSpec extends OwnedTable {
  /** The record's `type` in the export. */
  type: string;
}

export const TABLES: TableSpec[] = [
  { type: "profile", ...PROFILE_TABLE },
  { type: "workspace", ...WORKSPACE_TABLE },
  { type: "workspace_artifact", ...ARTIFACT_TABLE },
  { type: "memory", ...MEMORY_TABLE },
  { type: "document", ...DOCUMENT_TABLE },
  { type: "indexed_document", ...INDEX_VIEW_TABLE },
  { type: "chat_thread", ...THREAD_TABLE },
  { type: "chat_message", ...MESSAGE_TABLE },
  { type: "file", ...FILE_TABLE },
  { type: "file_block", ...FILE_BLOCK_TABLE },
];

export const TABLE_BY_TYPE = new Map(TABLES.map((spec) => [spec.type, spec]));

/** A stored row as an export record: `{type, ...columns}` with JSON columns parsed and the owner column dropped. */
export function toRecord(spec: TableSpec, row: Record<string, unknown>): Record<string, unknown> {
  const record: Record<string, unknown> = { type: spec.type };
  for (const column of spec.columns) {
    if (column === spec.owner || (spec.hidden && column in spec.hidden)) continue;
    const value = row[column] ?? null;
    record[column] = spec.json?.includes(column) && typeof value === "string" ? JSON.parse(value) : value;
  }
  return record;
}

/** An export record back into column values for `ownerId` (JSON columns serialized). Throws naming a missing column. */
export function fromRecord(spec: TableSpec, record: Record<string, unknown>, ownerId: string): unknown[] {
  return spec.columns.map((column) => {
    if (column === spec.owner) return ownerId;
    if (spec.hidden && column in spec.hidden) return spec.hidden[column];
    if (!(column in record)) {
      if (spec.defaults && column in spec.defaults) return spec.defaults[column];
      throw new Error(`${spec.type}: missing field '${column}'`);
    }
    const value = record[column];
    return spec.json?.includes(column) ? JSON.stringify(value ?? null) : value;
  });
}
