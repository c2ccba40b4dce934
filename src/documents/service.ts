import { conflict, notFound } from "../errors/app-error";
import { newId } from "../lib/ids";
import type { Outbox } from "../search/outbox";
import type { WorkspaceService } from "../workspaces/service";
import { checkLimits, nextMetadata, type DocumentChanges } from "./changes";
import type { IndexViewRepository } from "./index-view";
import type { DocumentHead, DocumentRepository, DocumentRow } from "./repository";
import { slugify, uniqueSlug } from "./slug";

export interface DocumentServiceDeps {
  repo: DocumentRepository;
  view: IndexViewRepository;
  outbox: Outbox;
  workspaces: WorkspaceService;
  transaction: <T>(fn: () => T) => T;
}

/**
 * Which view a write comes through. `unified` writes keep the derived index in step
 * (index view + outbox, in the same transaction); `legacy` writes touch only the stored
 * document, as the spec's legacy routes do.
 */
export type WriteView = "unified" | "legacy";

/**
 * The one document store behind both the unified document routes and the legacy notes
 * routes. Every call checks workspace ownership first (another user's workspace or
 * document answers 404 exactly like a missing one).
 */
export function createDocumentService({ repo, view, outbox, workspaces, transaction }: DocumentServiceDeps) {
  /** Copies the document's current indexable blocks into the index view and tells the indexer. */
  function syncIndex(doc: DocumentRow, now: string): void {
    const fresh = view.put({
      ownerId: doc.ownerId, documentId: doc.id, workspaceId: doc.workspaceId, documentType: doc.documentType, title: doc.title,
      metadata: doc.metadata, blocks: doc.indexableBlocks.map(({ id, type, content }) => ({ id, type, content })),
      createdAt: doc.createdAt, indexedAt: now,
    });
    outbox.enqueue({ ownerId: doc.ownerId, kind: "block", sourceId: doc.id }, fresh ? "insert" : "sync");
  }

  function slugFor(ownerId: string, workspaceId: string, title: string, id: string): string {
    const base = slugify(title);
    return uniqueSlug(base, repo.slugsLike(ownerId, workspaceId, base, id));
  }

  function requireDocument(ownerId: string, workspaceId: string, id: string): DocumentRow {
    workspaces.requireOwned(ownerId, workspaceId);
    const doc = repo.get(ownerId, workspaceId, id);
    if (!doc) throw notFound(`document '${id}' not found`);
    return doc;
  }

  function applyChanges(doc: DocumentRow, changes: DocumentChanges, now: string): DocumentRow {
    const title = changes.title ?? doc.title;
    return {
      ...doc,
      title,
      slug: title === doc.title ? doc.slug : slugFor(doc.ownerId, doc.workspaceId, title, doc.id),
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
    create(ownerId: string, workspaceId: string, id: string | undefined, changes: DocumentChanges, via: WriteView, options: { replace?: boolean } = {}) {
      workspaces.requireOwned(ownerId, workspaceId);
      checkLimits(changes);
      return transaction(() => {
        const now = new Date().toISOString();
        const docId = id ?? newId("doc");
        const existing = repo.getAnywhere(ownerId, docId);
        if (existing && !(options.replace && existing.workspaceId === workspaceId)) {
          throw conflict(`id: a document with id '${docId}' already exists`);
        }
        if (existing) {
          const doc = applyChanges(existing, changes, now);
          repo.update(doc);
          if (via === "unified") syncIndex(doc, now);
          return { document: doc, created: false };
        }
        const title = changes.title ?? "Untitled";
        const doc: DocumentRow = {
          ownerId, workspaceId, id: docId, title, slug: slugFor(ownerId, workspaceId, title, docId),
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
        repo.insert(doc);
        if (via === "unified") syncIndex(doc, now);
        return { document: doc, created: true };
      });
    },

    /** Rewrites only what `changes` carries. */
    update(ownerId: string, workspaceId: string, id: string, changes: DocumentChanges, via: WriteView): DocumentRow {
      checkLimits(changes);
      requireDocument(ownerId, workspaceId, id);
      return transaction(() => {
        const current = repo.get(ownerId, workspaceId, id);
        if (!current) throw notFound(`document '${id}' not found`);
        const now = new Date().toISOString();
        const doc = applyChanges(current, changes, now);
        repo.update(doc);
        if (via === "unified") syncIndex(doc, now);
        return doc;
      });
    },

    /** Unified deletes also drop the document from the index view (and so from search); legacy deletes do not. */
    remove(ownerId: string, workspaceId: string, id: string, via: WriteView): void {
      workspaces.requireOwned(ownerId, workspaceId);
      const deleted = transaction(() => {
        if (!repo.delete(ownerId, workspaceId, id)) return false;
        if (via === "unified" && view.delete(ownerId, id)) outbox.enqueue({ ownerId, kind: "block", sourceId: id }, "sync");
        return true;
      });
      if (!deleted) throw notFound(`document '${id}' not found`);
    },

    get(ownerId: string, workspaceId: string, id: string): DocumentRow {
      return requireDocument(ownerId, workspaceId, id);
    },

    /** Summaries of a workspace's documents, optionally of one notebook. */
    list(ownerId: string, workspaceId: string, notebookId?: string): DocumentHead[] {
      workspaces.requireOwned(ownerId, workspaceId);
      const heads = repo.listHeads(ownerId, workspaceId);
      return notebookId === undefined ? heads : heads.filter((head) => head.notebookId === notebookId);
    },

    /** Whole documents of a workspace (the legacy list parses stored content). */
    listFull(ownerId: string, workspaceId: string): DocumentRow[] {
      workspaces.requireOwned(ownerId, workspaceId);
      return repo.listFull(ownerId, workspaceId);
    },
  };
}
export type DocumentService = ReturnType<typeof createDocumentService>;
