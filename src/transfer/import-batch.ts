import type { Config } from "../config";
import type { SealTags } from "../crypto/seal-tags";
import { tagImportedRows } from "../crypto/seal-tags-import";
import { insertRows, ownedIds, type InsertOutcome } from "../db/owned-tables";
import type { Executor, Store } from "../db/store";
import { memoryImportWrites, type MemoryImportWrites } from "../memories";
import type { Outbox, SearchKind, SourceRef } from "../search";
import { ensureWorkspace } from "../workspaces";
import type { Entry, FileFormat } from "./formats";
import { EXPORT_FORMAT_VERSION, fromRecord, TABLE_BY_TYPE, TABLES, type TableSpec } from "./tables";

// How an import writes what it read: entries in batches, one transaction each, rows checked
// against the parents the importing user owns, and what is new queued for the search index.

/** Entries per transaction: large enough that commits (an fsync each on SQLite) stay rare. */
export const BATCH = 5_000;

export interface ImportProblem {
  place: string;
  message: string;
}

export interface ImportReport {
  format: FileFormat | "markdown";
  /** Entries read (lines, items or files), bad ones included. */
  read: number;
  inserted: number;
  /** Already there with the same id (a re-run): left as they were. */
  existing: number;
  failed: number;
  /** Every problem, in input order. */
  problems: ImportProblem[];
  /** New rows by record type. */
  byType: Record<string, number>;
  /** Sources queued for the search index (a running server, or the next `mnemo serve`, indexes them). */
  queued: number;
  workspaceId: string | null;
  /** Keys of files whose rows are new in this run (their bytes, when the export has them, are written). */
  newFiles: string[];
  /** Files whose bytes were restored. */
  fileBytes: number;
}

export interface ImportOptions {
  userId: string;
  /** Memories go to this workspace; Markdown documents too (default: one made for the folder). */
  workspaceId?: string;
  onProgress?: (done: number, total: number) => void;
}

export interface ImportDeps {
  store: Store;
  outbox: Outbox;
  config: Config;
  /** Tags the sealed fields of imported documents, messages and registries; without it they do not open through the server. */
  sealTags?: SealTags;
}

/** What the outbox is told about each new row of these record types. */
const INDEXED: Record<string, { kind: SearchKind; idColumn: string }> = {
  // Memories are queued by the memory write (settleMemories), with their neighbours.
  indexed_document: { kind: "block", idColumn: "document_id" },
  chat_message: { kind: "message", idColumn: "id" },
  file: { kind: "file", idColumn: "key" },
};

/** Columns of a record that must name something the importing user owns. */
type ParentTable = "workspaces" | "chat_threads" | "files";
const PARENT_NAME: Record<ParentTable, string> = {
  workspaces: "workspace",
  chat_threads: "chat thread",
  files: "file",
};
const PARENT_SPEC: Record<ParentTable, TableSpec> = {
  workspaces: TABLE_BY_TYPE.get("workspace")!,
  chat_threads: TABLE_BY_TYPE.get("chat_thread")!,
  files: TABLE_BY_TYPE.get("file")!,
};

/** Memories are written with their exact-duplicate key (not exported: it is derived from the content). */
const withContentKey = (spec: TableSpec): TableSpec => ({ ...spec, columns: [...spec.columns, "content_key"] });
const PARENT: Record<string, { column: string; table: ParentTable }> = {
  workspace_artifact: { column: "workspace_id", table: "workspaces" },
  memory: { column: "workspace_id", table: "workspaces" },
  document: { column: "workspace_id", table: "workspaces" },
  indexed_document: { column: "workspace_id", table: "workspaces" },
  chat_thread: { column: "workspace_id", table: "workspaces" },
  chat_message: { column: "thread_id", table: "chat_threads" },
  file: { column: "workspace_id", table: "workspaces" },
  file_block: { column: "file_key", table: "files" },
};

/**
 * Creates the workspace when missing. Throws when the id belongs to another user
 * (workspace ids are unique across users).
 */
export async function ensureTargetWorkspace(
  store: Store,
  ownerId: string,
  id: string,
  name: string,
): Promise<"created" | "existing"> {
  return store.transaction(async (tx) => {
    const outcome = await ensureWorkspace(tx, { ownerId, id, name });
    if (outcome === "taken") throw new Error(`--workspace: '${id}' belongs to another user`);
    return outcome;
  });
}

/** Tracks which parents (workspaces, threads) the importing user owns, asking the store once per id. */
export function ownership(ownerId: string) {
  const known = new Map<string, boolean>();
  return {
    async load(tx: Executor, table: ParentTable, ids: string[]): Promise<void> {
      const unknown = [...new Set(ids)].filter((id) => !known.has(`${table}:${id}`));
      if (!unknown.length) return;
      for (const id of unknown) known.set(`${table}:${id}`, false);
      for (const id of await ownedIds(tx, PARENT_SPEC[table], ownerId, unknown)) known.set(`${table}:${id}`, true);
    },
    owns: (table: string, id: string) => known.get(`${table}:${id}`) === true,
    grant: (table: string, id: string) => known.set(`${table}:${id}`, true),
  };
}

export function emptyReport(format: ImportReport["format"], workspaceId: string | null): ImportReport {
  return {
    format,
    read: 0,
    inserted: 0,
    existing: 0,
    failed: 0,
    problems: [],
    byType: {},
    queued: 0,
    workspaceId,
    newFiles: [],
    fileBytes: 0,
  };
}

/**
 * Writes one batch of entries in one transaction: rows grouped by type in dependency
 * order (workspaces before their documents, threads before their messages), each group
 * in multi-row statements, and the outbox rows for what is new.
 */
export async function writeBatch(
  { store, outbox, sealTags }: ImportDeps,
  ownerId: string,
  batch: Entry[],
  report: ImportReport,
  owned: ReturnType<typeof ownership>,
) {
  const groups = new Map<string, Array<{ place: string; record: Record<string, unknown> }>>();
  const add = (type: string, place: string, record: Record<string, unknown>) => {
    if (!groups.has(type)) groups.set(type, []);
    groups.get(type)!.push({ place, record });
  };
  const fail = (place: string, message: string) => {
    report.failed++;
    report.problems.push({ place, message });
  };
  for (const entry of batch) {
    if (entry.kind === "error") fail(entry.place, entry.message);
    else if (entry.kind === "memory") {
      const m = entry.memory;
      add("memory", entry.place, {
        id: m.id,
        content: m.content,
        metadata: m.metadata,
        workspace_id: m.workspaceId,
        session_id: m.sessionId,
        status: "active",
        created_at: m.createdAt,
        updated_at: m.updatedAt,
      });
    } else {
      const type = entry.record.type as string;
      if (type === "header") {
        if (entry.record.format !== "mnemo-export" || Number(entry.record.version) > EXPORT_FORMAT_VERSION) {
          fail(
            entry.place,
            `header: an export of format version ${String(entry.record.version)}, newer than this Mnemo reads (${EXPORT_FORMAT_VERSION})`,
          );
        }
      } else if (type === "file_data") {
        // Bytes are written after the rows (see `restoreFileBytes`).
      } else if (!TABLE_BY_TYPE.has(type)) {
        fail(entry.place, `type: '${type}' is not a record type of this Mnemo's export format`);
      } else add(type, entry.place, entry.record);
    }
  }
  const started = report.failed;
  const memories = memoryImportWrites(outbox);
  await store.transaction(async (tx) => {
    const refs: SourceRef[] = [];
    for (const declared of TABLES) {
      const spec = declared.type === "memory" ? withContentKey(declared) : declared;
      const group = groups.get(spec.type);
      if (!group) continue;
      const parent = PARENT[spec.type];
      if (parent) {
        await owned.load(
          tx,
          parent.table,
          group.flatMap(({ record }) =>
            typeof record[parent.column] === "string" ? [record[parent.column] as string] : [],
          ),
        );
      }
      const rows: unknown[][] = [];
      const places: string[] = [];
      for (const { place, record } of group) {
        const parentId = parent ? record[parent.column] : null;
        if (parent && parentId !== null && parentId !== undefined && !owned.owns(parent.table, String(parentId))) {
          fail(
            place,
            `${parent.column}: '${String(parentId)}' is not a ${PARENT_NAME[parent.table]} of user '${ownerId}'`,
          );
          continue;
        }
        try {
          const row = fromRecord(declared, record, ownerId);
          if (spec !== declared) row.push(memories.contentKey(String(record.id), String(record.content)));
          rows.push(row);
          places.push(place);
        } catch (error) {
          fail(place, (error as Error).message);
        }
      }
      const outcome = await insertRows(tx, spec, ownerId, rows);
      if (sealTags)
        await tagImportedRows(
          tx,
          sealTags,
          spec.type,
          spec.columns,
          ownerId,
          outcome.inserted.map((i) => rows[i]),
        );
      if (spec.type === "memory") await settleMemories(tx, memories, ownerId, spec, rows, outcome, report);
      report.inserted += outcome.inserted.length;
      report.existing += outcome.existing.length;
      if (outcome.inserted.length) report.byType[spec.type] = (report.byType[spec.type] ?? 0) + outcome.inserted.length;
      for (const i of outcome.conflicting) fail(places[i], conflictMessage(spec, rows[i]));
      const grants: Record<string, ParentTable> = {
        workspace: "workspaces",
        chat_thread: "chat_threads",
        file: "files",
      };
      const table = grants[spec.type];
      if (table)
        for (const i of [...outcome.inserted, ...outcome.existing])
          owned.grant(table, String(rows[i][spec.columns.indexOf(PARENT_SPEC[table].idColumns[0])]));
      if (spec.type === "file")
        for (const i of outcome.inserted) report.newFiles.push(String(rows[i][spec.columns.indexOf("key")]));
      const indexed = INDEXED[spec.type];
      if (indexed) {
        const at = spec.columns.indexOf(indexed.idColumn);
        for (const i of outcome.inserted) refs.push({ ownerId, kind: indexed.kind, sourceId: String(rows[i][at]) });
      }
    }
    await outbox.enqueueMany(tx, refs, "insert");
    report.queued += refs.length;
  });
  // Problems are reported in input order even though groups were written by type.
  if (report.failed > started) report.problems.sort((a, b) => placeOrder(a.place) - placeOrder(b.place));
}

/**
 * Memories of an import: an exact duplicate of one the user has in that workspace (or of
 * an earlier entry of the same file) is not written and counts as existing; each new one
 * goes through the memory write (first version, source `import`; its index entry and its
 * conversation's previous memory queued), as any new memory does.
 */
async function settleMemories(
  tx: Executor,
  memories: MemoryImportWrites,
  ownerId: string,
  spec: TableSpec,
  rows: unknown[][],
  outcome: InsertOutcome,
  report: ImportReport,
) {
  const col = (row: unknown[], name: string) => row[spec.columns.indexOf(name)];
  const duplicates = new Set<number>();
  for (const i of outcome.conflicting) {
    const row = rows[i];
    if (
      await memories.isDuplicate(
        tx,
        ownerId,
        (col(row, "workspace_id") as string | null) ?? null,
        String(col(row, "content")),
      )
    )
      duplicates.add(i);
  }
  if (duplicates.size) {
    outcome.conflicting = outcome.conflicting.filter((i) => !duplicates.has(i));
    outcome.existing.push(...duplicates);
  }
  report.queued += await memories.recordImported(
    tx,
    ownerId,
    outcome.inserted.map((i) => String(col(rows[i], "id"))),
    new Date().toISOString(),
  );
}

const placeOrder = (place: string) => Number(/(\d+)/.exec(place)?.[1] ?? 0);

function conflictMessage(spec: TableSpec, row: unknown[]): string {
  const id = spec.idColumns.map((c) => String(row[spec.columns.indexOf(c)])).join("/");
  if (spec.type === "document")
    return `document '${id}': its id or its slug in the workspace is taken by another document`;
  if (spec.type === "profile") return `profile: the user name is taken by another user`;
  return `${spec.type} '${id}': the id belongs to another user`;
}
