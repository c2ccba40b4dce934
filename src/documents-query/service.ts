import type { ChatReads } from "../chats/service";
import type { Executor, Store } from "../db/store";
import type { DocumentReads, IndexViewReads } from "../documents/service";
import { oneOf } from "../shared/aliases";
import type { SearchEngine, SearchFilters, SearchHit, SearchKind } from "../search";
import type { WorkspaceService } from "../workspaces/service";
import type { DocumentsQueryBody, DocumentsQueryResponse, QueryItem } from "./model";
import { renderContextText } from "../shared/context-text";
import { checkFilterCount, inspectFilters, scopeWorkspace, toSearchFilters } from "../shared/search-filters";
import { inspectQueryFilter } from "./filters";
import { snippet } from "./snippet";

export interface DocumentsQueryDeps {
  engine: SearchEngine;
  workspaces: WorkspaceService;
  documents: DocumentReads;
  view: IndexViewReads;
  chats: ChatReads;
  store: Store;
  fileNames(tx: Executor, ownerId: string, keys: string[]): Promise<Map<string, string>>;
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
function filtersOf(
  body: DocumentsQueryBody,
  workspaceId: string | undefined,
  kinds: SearchKind[],
  eq: ReturnType<typeof inspectQueryFilter>,
): SearchFilters {
  const fromMetadata = toSearchFilters(body.metadata?.filters);
  const metadata = { ...(fromMetadata.metadata ?? {}), ...eq.metadata };
  return {
    workspaceId,
    // Personal memories (no workspace) count as part of every workspace, as in context build.
    includeUnscoped: workspaceId !== undefined && kinds.includes("memory") ? true : undefined,
    sessionId: fromMetadata.sessionId,
    documentType: eq.documentType,
    metadata: Object.keys(metadata).length ? metadata : undefined,
  };
}

/** Checks a query as a whole before anything runs: aliases that differ, unknown filter operators and the filter key cap are 400s. */
function checkQuery(body: DocumentsQueryBody) {
  const filters = inspectFilters(body.metadata?.filters, "metadata.filters");
  const eq = inspectQueryFilter(body.filter as Record<string, unknown> | undefined);
  checkFilterCount(filters.count + eq.count, "filter");
  return {
    workspaceId: scopeWorkspace(body, filters.workspaceId, "metadata.filters"),
    limit: oneOf<number>(body, ["top_k", "topK"]) ?? 10,
    eq,
  };
}

/** A search hit as the query answers it: messages name their thread as source, blocks their document. */
function toItem(hit: SearchHit, threadId: string | null, titles: Map<string, string>, query: string): QueryItem {
  return {
    type: hit.kind,
    id: hit.itemId,
    sourceId: threadId ?? hit.sourceId,
    documentId: hit.kind === "block" ? hit.sourceId : null,
    threadId,
    workspaceId: hit.workspaceId,
    title:
      titles.get(
        hit.kind === "block" ? hit.sourceId : hit.kind === "file" ? `file:${hit.sourceId}` : `thread:${threadId}`,
      ) ?? null,
    score: hit.score,
    snippet: snippet(hit.text, query),
    content: hit.text,
  };
}

/**
 * `POST /v1/documents/query`: one engine search over document blocks and chat messages
 * (and memories / files when asked), owner-scoped, so another user's ids find nothing.
 */
export function createDocumentsQueryService(d: DocumentsQueryDeps) {
  /** Documents' titles as answers show them (the owner's documents only). */
  async function documentTitles(ownerId: string, documentIds: string[]): Promise<Map<string, string>> {
    const db = d.store.db;
    const titles = await d.documents.titles(db, ownerId, documentIds);
    // A legacy-deleted document still in the index keeps the title it was indexed with.
    const missing = documentIds.filter((id) => !titles.has(id));
    for (const [id, doc] of await d.view.getMany(db, ownerId, missing)) titles.set(id, doc.title);
    return titles;
  }

  async function titlesOf(
    ownerId: string,
    hits: SearchHit[],
    threadOf: Map<string, string>,
  ): Promise<Map<string, string>> {
    const db = d.store.db;
    const docIds = [...new Set(hits.filter((h) => h.kind === "block").map((h) => h.sourceId))];
    const threadIds = [
      ...new Set(
        hits
          .filter((h) => h.kind === "message")
          .map((h) => threadOf.get(h.sourceId))
          .filter((id) => id !== undefined),
      ),
    ];
    const titles = await documentTitles(ownerId, docIds);
    for (const [id, thread] of await d.chats.getThreads(db, ownerId, threadIds))
      titles.set(`thread:${id}`, thread.title);
    const fileKeys = [...new Set(hits.filter((h) => h.kind === "file").map((h) => h.sourceId))];
    if (fileKeys.length)
      for (const [key, name] of await d.fileNames(db, ownerId, fileKeys)) titles.set(`file:${key}`, name);
    return titles;
  }

  return {
    documentTitles,

    async query(ownerId: string, body: DocumentsQueryBody): Promise<DocumentsQueryResponse> {
      const { workspaceId, limit, eq } = checkQuery(body);
      if (workspaceId !== undefined) await d.workspaces.requireOwned(ownerId, workspaceId);
      const kinds = kindsOf(body.include);
      const result = kinds.length
        ? await d.engine.search({
            ownerId,
            query: body.query,
            kinds,
            filters: filtersOf(body, workspaceId, kinds, eq),
            limit,
            minScore: body.minScore,
            signals: body.signals,
          })
        : { hits: [], mode: "fulltext_fallback" as const, strategy: "fulltext" as const, signals: [] };
      // A message is a source of its own in the index; answers name its thread.
      const messages = await d.chats.getMessages(
        d.store.db,
        ownerId,
        result.hits.filter((h) => h.kind === "message").map((h) => h.sourceId),
      );
      const threadOf = new Map([...messages].map(([id, message]) => [id, message.threadId]));
      const titles = await titlesOf(ownerId, result.hits, threadOf);
      const items = result.hits.flatMap((hit) => {
        const threadId = hit.kind === "message" ? threadOf.get(hit.sourceId) : undefined;
        // A message deleted since the search read it is dropped, as the engine drops any stale hit.
        return hit.kind === "message" && threadId === undefined
          ? []
          : [toItem(hit, threadId ?? null, titles, body.query)];
      });
      return {
        query: body.query,
        mode: result.mode,
        strategy: result.strategy,
        signals: [...result.signals],
        query_strategy: QUERY_STRATEGY,
        items,
        results: items,
        contextText: renderContextText(items),
      };
    },
  };
}
export type DocumentsQueryService = ReturnType<typeof createDocumentsQueryService>;
