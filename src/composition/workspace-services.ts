import { createChatRepository } from "../chats/repository";
import { messageSearchSource } from "../chats/search-source";
import { createChatService } from "../chats/service";
import { createContextService } from "../context/service";
import type { SealTags } from "../crypto/seal-tags";
import type { Store } from "../db/store";
import { createDerivedIndexRepository } from "../derived-index/repository";
import { createDerivedIndexService } from "../derived-index/service";
import { createIndexViewRepository } from "../documents/index-view-repository";
import { createDocumentRepository } from "../documents/repository";
import { blockSearchSource } from "../documents/search-source";
import { createDocumentService } from "../documents/service";
import { createDocumentsQueryService, type DocumentsQueryDeps } from "../documents-query/service";
import { purgeThreadJobs } from "../formation/workspace-purge";
import { createNoteService } from "../notes/service";
import type { Embedder, IndexingControl, Outbox, SearchEngine } from "../search";
import type { Cursors } from "../shared/cursors";
import { createArtifactRepository, createWorkspaceRepository } from "../workspaces/repository";
import { createWorkspaceService } from "../workspaces/service";

// Part of the composition root (compose.ts): the workspaces and what lives in them, wired.

/** The repositories of workspaces and their contents; opened before the indexer, which reads them. */
export function openWorkspaceRepositories() {
  return {
    workspaces: createWorkspaceRepository(),
    artifacts: createArtifactRepository(),
    documents: createDocumentRepository(),
    view: createIndexViewRepository(),
    chats: createChatRepository(),
    derived: createDerivedIndexRepository(),
  };
}
export type WorkspaceRepositories = ReturnType<typeof openWorkspaceRepositories>;

/** Search sources: document blocks (from the index view) and chat messages. */
export function workspaceSearchSources(repos: WorkspaceRepositories) {
  return { block: blockSearchSource(repos.view), message: messageSearchSource(repos.chats) };
}

/** Workspaces, documents (both views), chats, the derived index, the documents query and context build (which checks workspaces). */
export function createWorkspaceServices(d: {
  repos: WorkspaceRepositories;
  outbox: Outbox;
  engine: SearchEngine;
  indexer: IndexingControl;
  embedder: Embedder | null;
  store: Store;
  /** Opaque list cursors (see shared/cursors.ts), for every paginated list here. */
  cursors: Cursors;
  /** Names of files by key, the titles of file hits in the documents query. */
  fileNames: DocumentsQueryDeps["fileNames"];
  sealTags: SealTags;
}) {
  const { repos, outbox, engine, store, cursors } = d;
  const workspaces = createWorkspaceService({ repo: repos.workspaces, store, cursors });
  const documents = createDocumentService({
    repo: repos.documents,
    view: repos.view,
    outbox,
    workspaces,
    store,
    cursors,
    sealTags: d.sealTags,
  });
  return {
    workspaces,
    documents,
    notes: createNoteService(documents, workspaces, repos.artifacts, store, d.sealTags),
    chats: createChatService({
      repo: repos.chats,
      outbox,
      workspaces,
      store,
      cursors,
      purgeThreadJobs,
      sealTags: d.sealTags,
    }),
    derivedIndex: createDerivedIndexService({
      workspaces,
      documents: repos.documents,
      view: repos.view,
      chats: repos.chats,
      artifacts: repos.artifacts,
      repo: repos.derived,
      outbox,
      indexer: d.indexer,
      engine,
      embedderSpace: d.embedder?.spaceId ?? null,
      store,
      cursors,
    }),
    documentsQuery: createDocumentsQueryService({
      engine,
      workspaces,
      documents: repos.documents,
      view: repos.view,
      chats: repos.chats,
      store,
      fileNames: d.fileNames,
    }),
    context: createContextService(engine, workspaces),
  };
}
