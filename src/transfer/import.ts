import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { basename, resolve } from "node:path";
import type { Config } from "../config";
import { insertRows, ownedIds, type InsertOutcome } from "../db/owned-tables";
import type { Executor, Store } from "../db/store";
import type { SealTags } from "../crypto/seal-tags";
import { tagImportedRows } from "../crypto/seal-tags-import";
import { documentNames, slugify, snapshotOf, uniqueSlug } from "../documents";
import { fileBytesRestore } from "../files";
import { memoryImportWrites, type MemoryImportWrites } from "../memories";
import type { Outbox, SearchKind, SourceRef } from "../search";
import { ensureWorkspace } from "../workspaces";
import { importChatExport, loadChatExport, type ChatImportOptions, type ChatImportReport } from "./chat-import";
import { KNOWN_FORMATS, readEntries, type Entry, type FileFormat } from "./formats";
import { readMarkdownFolder } from "./markdown";
import { fromRecord, TABLE_BY_TYPE, TABLES, type TableSpec } from "./tables";

/** Entries per transaction: large enough that commits (an fsync each on SQLite) stay rare. */
const BATCH = 5_000;
export const EXPORT_FORMAT_VERSION = 1;

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

interface Deps {
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
async function ensureTargetWorkspace(
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
function ownership(ownerId: string) {
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

function emptyReport(format: ImportReport["format"], workspaceId: string | null): ImportReport {
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
async function writeBatch(
  { store, outbox, sealTags }: Deps,
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

/** The file is empty or in none of the known formats: nothing was imported. */
export class ImportFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ImportFormatError";
  }
}

/** Imports a JSON or JSONL file of memories, or a Mnemo export, for `userId`. */
export async function importFile(deps: Deps, path: string, options: ImportOptions): Promise<ImportReport> {
  const text = await readFile(path, "utf8");
  if (!text.trim()) throw new ImportFormatError(`${path}: the file is empty; nothing to import`);
  const generator = readEntries(text, new Date().toISOString(), options.workspaceId);
  const entries: Entry[] = [];
  let step = generator.next();
  for (; !step.done; step = generator.next()) entries.push(step.value);
  // Nothing is written (not even --workspace) for a file in none of the formats.
  if (typeof step.value === "object")
    throw new ImportFormatError(
      `${path}: format not recognised: ${step.value.unrecognised}; known formats: ${KNOWN_FORMATS}`,
    );
  if (options.workspaceId)
    await ensureTargetWorkspace(deps.store, options.userId, options.workspaceId, options.workspaceId);
  const report = emptyReport(step.value, options.workspaceId ?? null);
  report.read = entries.length;
  const owned = ownership(options.userId);
  for (let i = 0; i < entries.length; i += BATCH) {
    await writeBatch(deps, options.userId, entries.slice(i, i + BATCH), report, owned);
    options.onProgress?.(Math.min(entries.length, i + BATCH), entries.length);
  }
  if (!entries.length) options.onProgress?.(0, 0);
  const bytes = entries.filter(
    (e): e is Extract<Entry, { kind: "record" }> => e.kind === "record" && e.record.type === "file_data",
  );
  if (bytes.length) await restoreFileBytes(deps, options.userId, bytes, report);
  return report;
}

/**
 * Writes the bytes of an export made `--with-files` (`file_data` records, base64 parts
 * in order) to the blob store, for files of the user that have none yet (new in this
 * run, or imported before without bytes), and checks them against the stored SHA-256.
 */
async function restoreFileBytes(
  deps: Deps,
  ownerId: string,
  parts: Array<Extract<Entry, { kind: "record" }>>,
  report: ImportReport,
) {
  const byKey = new Map<string, Array<{ part: number; data: string; place: string }>>();
  for (const { record, place } of parts) {
    const key = String(record.key);
    if (!byKey.has(key)) byKey.set(key, []);
    byKey.get(key)!.push({ part: Number(record.part), data: String(record.data), place });
  }
  const wanted = new Map(
    (await fileBytesRestore.withoutBytes(deps.store.db, ownerId, [...byKey.keys()])).map((file) => [file.key, file]),
  );
  if (!wanted.size) return;
  // LanceDB loads only when an export carries bytes.
  const { BlobStore, blobsLocation } = await import("../blobs/store");
  const blobs = await BlobStore.open(blobsLocation(deps.config));
  try {
    for (const [key, file] of wanted) {
      const chunks = byKey.get(key)!.sort((a, b) => a.part - b.part);
      const blob = await blobs.write(chunks.map((chunk) => Buffer.from(chunk.data, "base64")));
      if (blob.sha256 !== file.sha256) {
        await blobs.delete(blob.blobId);
        report.failed++;
        report.problems.push({
          place: chunks[0].place,
          message: `file_data '${key}': the bytes do not match the file's sha256; the file has no bytes`,
        });
        continue;
      }
      await fileBytesRestore.attachBytes(deps.store.db, ownerId, key, blob.blobId);
      report.fileBytes++;
    }
  } finally {
    blobs.close();
  }
}

/**
 * Imports a folder of Markdown files (an Obsidian vault) as unified documents of one
 * workspace: `--workspace`, else one made for the folder (its id derived from the user
 * and the folder's path, so a re-run uses the same one).
 */
export async function importMarkdownFolder(deps: Deps, dir: string, options: ImportOptions): Promise<ImportReport> {
  const absolute = resolve(dir);
  const scope = `${options.userId}\u001f${absolute}`;
  const workspaceId = options.workspaceId ?? `ws_md_${createHash("sha256").update(scope).digest("hex").slice(0, 24)}`;
  await ensureTargetWorkspace(deps.store, options.userId, workspaceId, options.workspaceId ?? basename(absolute));
  const report = emptyReport("markdown", workspaceId);
  const docs = await readMarkdownFolder(absolute, `${options.userId}\u001f${workspaceId}`, (place, message) => {
    report.failed++;
    report.problems.push({ place, message });
  });
  report.read = docs.length + report.failed;
  const taken = await documentNames.idsAndSlugs(deps.store.db, options.userId, workspaceId);
  const existingIds = new Set(taken.map((r) => r.id));
  const slugs = new Set(taken.map((r) => r.slug));
  const now = new Date().toISOString();
  const entries: Entry[] = [];
  for (const doc of docs) {
    if (existingIds.has(doc.id)) {
      report.existing++;
      continue;
    }
    const slug = uniqueSlug(slugify(doc.title), slugs);
    slugs.add(slug);
    const row = {
      workspace_id: workspaceId,
      id: doc.id,
      document_type: "note",
      title: doc.title,
      slug,
      root_block_id: doc.rootBlockId,
      notebook_id: null,
      document_payload: { title: doc.title },
      blocks_payload: doc.blocks,
      markdown: doc.markdown,
      metadata: doc.metadata,
      indexable_blocks: doc.blocks,
      created_at: doc.createdAt,
      updated_at: doc.updatedAt,
    };
    const view = snapshotOf(
      {
        ownerId: options.userId,
        workspaceId,
        id: doc.id,
        documentType: "note",
        title: doc.title,
        rootBlockId: doc.rootBlockId,
        metadata: doc.metadata,
        markdown: doc.markdown,
        indexableBlocks: doc.blocks,
        createdAt: doc.createdAt,
      },
      now,
    );
    entries.push({ kind: "record", place: doc.path, record: { type: "document", ...row } });
    entries.push({
      kind: "record",
      place: doc.path,
      record: {
        type: "indexed_document",
        document_id: view.documentId,
        workspace_id: workspaceId,
        document_type: view.documentType,
        title: view.title,
        root_block_id: view.rootBlockId,
        metadata: view.metadata,
        blocks: view.blocks,
        created_at: view.createdAt,
        indexed_at: view.indexedAt,
      },
    });
  }
  const owned = ownership(options.userId);
  owned.grant("workspaces", workspaceId);
  for (let i = 0; i < entries.length; i += BATCH) {
    await writeBatch(deps, options.userId, entries.slice(i, i + BATCH), report, owned);
    options.onProgress?.(Math.min(entries.length, i + BATCH) / 2, entries.length / 2);
  }
  // Each new document counted twice (the document and its index view entry).
  report.inserted = report.byType.document ?? 0;
  return report;
}

/** A file or a folder: Markdown folder, a ChatGPT or Claude export, else a file in one of the memory formats or our export. */
export async function importPath(
  deps: Deps,
  path: string,
  options: ImportOptions & Pick<ChatImportOptions, "extract" | "limit">,
): Promise<ImportReport | ChatImportReport> {
  const info = await stat(path);
  if (info.isDirectory()) return importMarkdownFolder(deps, path, options);
  const conversations = await loadChatExport(path, new Date().toISOString());
  return conversations ? importChatExport(deps, conversations, options) : importFile(deps, path, options);
}
