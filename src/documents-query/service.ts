import type { ChatRepository } from "../chats/repository";
import { renderContextText } from "../context/service";
import type { Store } from "../db/store";
import type { IndexViewRepository } from "../documents/index-view";
import type { DocumentRepository } from "../documents/repository";
import { toSearchFilters } from "../memories/service";
import type { SearchEngine } from "../search/engine";
import type { SearchFilters, SearchHit, SearchKind } from "../search/types";
import type { WorkspaceService } from "../workspaces/service";
import type { DocumentsQueryBody, DocumentsQueryResponse, QueryItem } from "./model";
import { snippet } from "./snippet";

export interface DocumentsQueryDeps {
  engine: SearchEngine;
  workspaces: WorkspaceService;
  documents: DocumentRepository;
  view: IndexViewRepository;
  chats: ChatRepository;
  store: Store;
}

/** The policy the engine runs: vectors first when an embedder answers, BM25 full text otherwise. */
export const QUERY_STRATEGY = "semantic_first_keyword_fallback" as const;

/** Which index kinds a query's `include` asks for. */
function kindsOf(include: DocumentsQueryBody["include"]): SearchKind[] {
  const wanted = { notes: true, memories: false, files: false, ...include };
  return [
    ...(wanted.notes ? (["block", "message"] as const) : []),
    ...(wanted.memories ? (["memory"] as const) : []),
    ...(wanted.files ? (["file"] as const) : []),
  ];
}

/** The engine filters of a query: workspace, session, document type and metadata equality. */
function filtersOf(body: DocumentsQueryBody, workspaceId: string | undefined, kinds: SearchKind[]): SearchFilters {
  const fromMetadata = toSearchFilters(body.metadata?.filters);
  const { document_type, documentType, ...eqRest } = body.filter?.eq ?? {};
  const metadata = { ...(fromMetadata.metadata ?? {}), ...(eqRest as Record<string, string | number | boolean | null>) };
  return {
    workspaceId,
    // Personal memories (no workspace) count as part of every workspace, as in context build.
    includeUnscoped: workspaceId !== undefined && kinds.includes("memory") ? true : undefined,
    sessionId: fromMetadata.sessionId,
    documentType: document_type ?? documentType,
    metadata: Object.keys(metadata).length ? metadata : undefined,
  };
}

/**
 * `POST /v1/documents/query`: one engine search over document blocks and chat messages
 * (and memories / files when asked), owner-scoped, so another user's ids find nothing.
 */
export function createDocumentsQueryService(d: DocumentsQueryDeps) {
  async function titlesOf(ownerId: string, hits: SearchHit[]): Promise<Map<string, string>> {
    const db = d.store.db;
    const docIds = [...new Set(hits.filter((h) => h.kind === "block").map((h) => h.sourceId))];
    const threadIds = [...new Set(hits.filter((h) => h.kind === "message").map((h) => h.sourceId))];
    const titles = await d.documents.titles(db, ownerId, docIds);
    // A legacy-deleted document still in the index keeps the title it was indexed with.
    const missing = docIds.filter((id) => !titles.has(id));
    for (const [id, doc] of await d.view.getMany(db, ownerId, missing)) titles.set(id, doc.title);
    for (const [id, thread] of await d.chats.getThreads(db, ownerId, threadIds)) titles.set(`thread:${id}`, thread.title);
    return titles;
  }

  return {
    async query(ownerId: string, body: DocumentsQueryBody): Promise<DocumentsQueryResponse> {
      const workspaceId = body.workspace_id ?? body.workspaceId ?? toSearchFilters(body.metadata?.filters).workspaceId;
      if (workspaceId !== undefined) await d.workspaces.requireOwned(ownerId, workspaceId);
      const kinds = kindsOf(body.include);
      const result = kinds.length
        ? await d.engine.search({
            ownerId, query: body.query, kinds, filters: filtersOf(body, workspaceId, kinds), limit: body.top_k ?? body.topK ?? 10, minScore: body.minScore,
          })
        : { hits: [], mode: "fulltext_fallback" as const, strategy: "fulltext" as const };
      const titles = await titlesOf(ownerId, result.hits);
      const items: QueryItem[] = result.hits.map((hit) => ({
        type: hit.kind,
        id: hit.itemId,
        sourceId: hit.sourceId,
        documentId: hit.kind === "block" ? hit.sourceId : null,
        threadId: hit.kind === "message" ? hit.sourceId : null,
        workspaceId: hit.workspaceId,
        title: (hit.kind === "block" ? titles.get(hit.sourceId) : hit.kind === "message" ? titles.get(`thread:${hit.sourceId}`) : undefined) ?? null,
        score: hit.score,
        snippet: snippet(hit.text, body.query),
        content: hit.text,
      }));
      return {
        query: body.query, mode: result.mode, strategy: result.strategy, query_strategy: QUERY_STRATEGY,
        items, results: items, contextText: renderContextText(items),
      };
    },
  };
}
export type DocumentsQueryService = ReturnType<typeof createDocumentsQueryService>;
