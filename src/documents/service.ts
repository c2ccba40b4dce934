import { ConstraintError } from "../db/errors";
import type { Executor, Store } from "../db/store";
import { conflict, notFound } from "../shared/app-error";
import type { Cursors } from "../shared/cursors";
import { newId } from "../lib/ids";
import { pager, seqAfter, type Page, type PageRequest } from "../shared/pagination";
import type { Outbox } from "../search";
import type { WorkspaceService } from "../workspaces/service";
import { bindingFor } from "../crypto/binding";
import type { SealTags } from "../crypto/seal-tags";
import { checkLimits, nextMetadata, sealChanges, type DocumentChanges } from "./changes";
import { snapshotOf } from "./index-view";
import type { IndexViewRepository } from "./index-view-repository";
import type { DocumentHead, DocumentRepository, DocumentRow } from "./repository";

/** What another domain may read of documents in its own reads: titles (the documents query's hits), ids and index sources (the derived index's rebuilds). */
export type DocumentReads = Pick<DocumentRepository, "titles" | "existing" | "listIndexSourcesPage">;
/** Entries of the index view as other domains read them. */
export type IndexViewReads = Pick<IndexViewRepository, "getMany" | "listByWorkspace" | "pageByWorkspace">;
/** The index view as the derived index's reindex and clear write it, inside their own transactions. */
export type IndexViewAccess = IndexViewReads & Pick<IndexViewRepository, "put" | "delete" | "idsByWorkspace">;
import { slugify, uniqueSlug } from "./slug";

export interface DocumentServiceDeps {
  repo: DocumentRepository;
  view: IndexViewRepository;
  outbox: Outbox;
  workspaces: WorkspaceService;
  store: Store;
  cursors: Cursors;
  /** The seal tags of the sealed fields, written with each write (crypto/seal-tags.ts). */
  sealTags: SealTags;
}

/** A page of whole documents (the legacy notes list) stops early past this much stored content. */
export const FULL_PAGE_BYTES = 8 * 1024 * 1024;

/** Runs of an update that lost a slug race to a concurrent one; see `write`. */
const UNIQUE_RETRIES = 5;

/**
 * Which view a write comes through. `unified` writes keep the derived index in step
 * (index view + outbox, in the same transaction); `legacy` writes touch only the stored
 * document, as the legacy routes do (docs/api.md#legacy-notes-and-notebooks).
 */
export type WriteView = "unified" | "legacy";

/**
 * The one document store behind both the unified document routes and the legacy notes
 * routes. Every call checks workspace ownership first (another user's workspace or
 * document answers 404 exactly like a missing one).
 */
export function createDocumentService({
  repo,
  view,
  outbox,
  workspaces,
  store,
  cursors,
  sealTags,
}: DocumentServiceDeps) {
  /**
   * Tags the payload fields a write stored (all three on a new document), in its `tx`: a
   * field holding ciphertext opens through the server only where its tag says it was
   * stored. Values a client sealed itself are tagged too: the owner stored them here.
   */
  async function tagFields(tx: Executor, doc: DocumentRow, changes: DocumentChanges | null): Promise<void> {
    const bind = bindingFor(doc.ownerId, "document", doc.id);
    if (!changes || changes.documentPayload !== undefined)
      await sealTags.stamp(tx, bind("documentPayload"), doc.documentPayload);
    if (!changes || changes.blocksPayload !== undefined)
      await sealTags.stamp(tx, bind("blocksPayload"), doc.blocksPayload);
    if (!changes || changes.markdown !== undefined) await sealTags.stamp(tx, bind("markdown"), doc.markdown);
  }

  /**
   * Runs a write transaction. Two concurrent renames may choose the same slug: on
   * PostgreSQL the loser's UPDATE fails on the unique constraint, which aborts its
   * transaction, so the whole transaction runs again and then sees the winner's slug.
   * (Creates avoid this with ON CONFLICT, see `create`.) SQLite serializes writers, so
   * there this never happens.
   */
  async function write<T>(fn: (tx: Executor) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await store.transaction(fn);
      } catch (error) {
        if (!(error instanceof ConstraintError && error.constraint === "unique") || attempt >= UNIQUE_RETRIES)
          throw error;
      }
    }
  }

  /** Copies what the document gives the index (see `snapshotOf`) into the index view and tells the indexer, in the write's `tx`. */
  async function syncIndex(tx: Executor, doc: DocumentRow, now: string): Promise<void> {
    const fresh = await view.put(tx, snapshotOf(doc, now));
    await outbox.enqueue(tx, { ownerId: doc.ownerId, kind: "block", sourceId: doc.id }, fresh ? "insert" : "sync");
  }

  async function slugFor(
    tx: Executor,
    ownerId: string,
    workspaceId: string,
    title: string,
    id: string,
  ): Promise<string> {
    const base = slugify(title);
    return uniqueSlug(base, await repo.slugsLike(tx, ownerId, workspaceId, base, id));
  }

  async function requireDocument(ownerId: string, workspaceId: string, id: string): Promise<DocumentRow> {
    await workspaces.requireOwned(ownerId, workspaceId);
    const doc = await repo.get(store.db, ownerId, workspaceId, id);
    if (!doc) throw notFound(`document '${id}' not found`);
    return doc;
  }

  async function applyChanges(
    tx: Executor,
    doc: DocumentRow,
    changes: DocumentChanges,
    now: string,
  ): Promise<DocumentRow> {
    const title = changes.title ?? doc.title;
    return {
      ...doc,
      title,
      slug: title === doc.title ? doc.slug : await slugFor(tx, doc.ownerId, doc.workspaceId, title, doc.id),
      documentType: changes.documentType ?? doc.documentType,
      rootBlockId: changes.rootBlockId ?? doc.rootBlockId,
      notebookId: changes.notebookId !== undefined ? changes.notebookId : doc.notebookId,
      documentPayload: changes.documentPayload ?? doc.documentPayload,
      blocksPayload: changes.blocksPayload ?? doc.blocksPayload,
      markdown: changes.markdown ?? doc.markdown,
      metadata: nextMetadata(doc.metadata, changes),
      indexableBlocks: changes.indexableBlocks ?? doc.indexableBlocks,
      updatedAt: now,
    };
  }

  return {
    /**
     * Creates a document (`title` defaults to 'Untitled' for legacy notes). With
     * `replace`, an existing document of that id in the workspace is rewritten instead
     * (the legacy POST with `documentId`); otherwise an existing id is a 409.
     */
    async create(
      ownerId: string,
      workspaceId: string,
      id: string | undefined,
      changes: DocumentChanges,
      via: WriteView,
      options: { replace?: boolean } = {},
    ): Promise<{ document: DocumentRow; created: boolean }> {
      await workspaces.requireOwned(ownerId, workspaceId);
      checkLimits(changes);
      const docId = id ?? newId("doc");
      changes = sealChanges(changes);
      return write(async (tx) => {
        const now = new Date().toISOString();
        // A concurrent create may take this id or slug between our reads and the insert; the
        // insert then does nothing (on PostgreSQL after waiting for that write to commit) and
        // the next round sees its row: a 409, a rewrite, or the next free slug.
        for (;;) {
          const existing = await repo.getAnywhere(tx, ownerId, docId);
          if (existing && !(options.replace && existing.workspaceId === workspaceId)) {
            throw conflict(`id: a document with id '${docId}' already exists`);
          }
          if (existing) {
            const doc = await applyChanges(tx, existing, changes, now);
            await repo.update(tx, doc);
            await tagFields(tx, doc, changes);
            if (via === "unified") await syncIndex(tx, doc, now);
            return { document: doc, created: false };
          }
          const title = changes.title ?? "Untitled";
          const doc: DocumentRow = {
            ownerId,
            workspaceId,
            id: docId,
            title,
            slug: await slugFor(tx, ownerId, workspaceId, title, docId),
            documentType: changes.documentType ?? "note",
            rootBlockId: changes.rootBlockId ?? newId("blk"),
            notebookId: changes.notebookId ?? null,
            documentPayload: changes.documentPayload ?? {},
            blocksPayload: changes.blocksPayload ?? [],
            markdown: changes.markdown ?? "",
            metadata: nextMetadata({}, changes),
            indexableBlocks: changes.indexableBlocks ?? [],
            createdAt: now,
            updatedAt: now,
          };
          if (!(await repo.insert(tx, doc))) continue;
          await tagFields(tx, doc, null);
          if (via === "unified") await syncIndex(tx, doc, now);
          return { document: doc, created: true };
        }
      });
    },

    /** Rewrites only what `changes` carries. */
    async update(
      ownerId: string,
      workspaceId: string,
      id: string,
      changes: DocumentChanges,
      via: WriteView,
    ): Promise<DocumentRow> {
      checkLimits(changes);
      changes = sealChanges(changes);
      await requireDocument(ownerId, workspaceId, id);
      return write(async (tx) => {
        const current = await repo.get(tx, ownerId, workspaceId, id);
        if (!current) throw notFound(`document '${id}' not found`);
        const now = new Date().toISOString();
        const doc = await applyChanges(tx, current, changes, now);
        await repo.update(tx, doc);
        await tagFields(tx, doc, changes);
        if (via === "unified") await syncIndex(tx, doc, now);
        return doc;
      });
    },

    /**
     * Every delete, unified or legacy, drops the document from the index view and so from
     * search and from disk: the view's snapshot holds its text, and a deleted text must go
     * (the legacy contract's stale entries until reindex would keep it indefinitely).
     */
    async remove(ownerId: string, workspaceId: string, id: string): Promise<void> {
      await workspaces.requireOwned(ownerId, workspaceId);
      const deleted = await store.transaction(async (tx) => {
        if (!(await repo.delete(tx, ownerId, workspaceId, id))) return false;
        await sealTags.forget(tx, ownerId, "document", id);
        if (await view.delete(tx, ownerId, id))
          await outbox.enqueue(tx, { ownerId, kind: "block", sourceId: id }, "sync");
        return true;
      });
      if (!deleted) throw notFound(`document '${id}' not found`);
    },

    async get(ownerId: string, workspaceId: string, id: string): Promise<DocumentRow> {
      return requireDocument(ownerId, workspaceId, id);
    },

    /** A page of summaries of a workspace's documents (of one notebook when given), oldest first. */
    async list(
      ownerId: string,
      workspaceId: string,
      notebookId: string | undefined,
      request: PageRequest,
    ): Promise<Page<DocumentHead>> {
      await workspaces.requireOwned(ownerId, workspaceId);
      const paging = pager(cursors, ownerId, `documents:${workspaceId}:${notebookId ?? ""}`);
      const { limit, after } = paging.start(request);
      const rows = await repo.listHeadsPage(store.db, ownerId, workspaceId, notebookId, seqAfter(after), limit + 1);
      return paging.page(rows, limit, (row) => String(row.seq));
    },

    /** A page of whole documents of a workspace (the legacy list parses stored content), bounded by count and by bytes. */
    async listFull(ownerId: string, workspaceId: string, request: PageRequest): Promise<Page<DocumentRow>> {
      await workspaces.requireOwned(ownerId, workspaceId);
      const paging = pager(cursors, ownerId, `notes:${workspaceId}`);
      const { limit, after } = paging.start(request);
      const { rows, more } = await repo.listFullPage(
        store.db,
        ownerId,
        workspaceId,
        seqAfter(after),
        limit,
        FULL_PAGE_BYTES,
      );
      // `page` cuts at `limit`; a byte-bounded page is shorter, so its cursor is made here.
      const last = rows[rows.length - 1];
      return { items: rows, hasMore: more, nextCursor: more && last ? paging.cursorAt(String(last.seq)) : null };
    },
  };
}
export type DocumentService = ReturnType<typeof createDocumentService>;
