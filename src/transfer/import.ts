import { readFile, stat } from "node:fs/promises";
import { fileBytesRestore } from "../files";
import { importChatExport, loadChatExport, type ChatImportOptions, type ChatImportReport } from "./chat-import";
import { KNOWN_FORMATS, readEntries, type Entry } from "./formats";
import {
  BATCH,
  emptyReport,
  ensureTargetWorkspace,
  ownership,
  writeBatch,
  type ImportDeps,
  type ImportOptions,
  type ImportReport,
} from "./import-batch";
import { importMarkdownFolder } from "./markdown-import";

export type { ImportOptions, ImportProblem, ImportReport } from "./import-batch";
export { importMarkdownFolder } from "./markdown-import";

/** The file is empty or in none of the known formats: nothing was imported. */
export class ImportFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ImportFormatError";
  }
}

/** Imports a JSON or JSONL file of memories, or a Mnemo export, for `userId`. */
export async function importFile(deps: ImportDeps, path: string, options: ImportOptions): Promise<ImportReport> {
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
  deps: ImportDeps,
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

/** A file or a folder: Markdown folder, a ChatGPT or Claude export, else a file in one of the memory formats or our export. */
export async function importPath(
  deps: ImportDeps,
  path: string,
  options: ImportOptions & Pick<ChatImportOptions, "extract" | "limit">,
): Promise<ImportReport | ChatImportReport> {
  const info = await stat(path);
  if (info.isDirectory()) return importMarkdownFolder(deps, path, options);
  const conversations = await loadChatExport(path, new Date().toISOString());
  return conversations ? importChatExport(deps, conversations, options) : importFile(deps, path, options);
}
