import { createHash } from "node:crypto";
import { basename, resolve } from "node:path";
import { documentNames, slugify, snapshotOf, uniqueSlug } from "../documents";
import type { Entry } from "./formats";
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
import { readMarkdownFolder } from "./markdown";

/**
 * Imports a folder of Markdown files (an Obsidian vault) as unified documents of one
 * workspace: `--workspace`, else one made for the folder (its id derived from the user
 * and the folder's path, so a re-run uses the same one).
 */
export async function importMarkdownFolder(
  deps: ImportDeps,
  dir: string,
  options: ImportOptions,
): Promise<ImportReport> {
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
