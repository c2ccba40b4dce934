import { renderContextText } from "../shared/context-text";
import { checkFilterCount, inspectFilters, scopeWorkspace, toSearchFilters } from "../shared/search-filters";
import { SEARCH_SIGNALS, type SearchEngine, type SearchHit, type SearchKind, type SearchResult } from "../search";
import type { WorkspaceService } from "../workspaces/service";
import type { BuildContextBody, BuiltContext } from "./model";

const TYPE_OF: Record<SearchKind, "memory" | "note" | "file" | null> = {
  memory: "memory",
  block: "note",
  file: "file",
  message: null,
};

/**
 * Builds prompt context from the one search engine: memories (of the workspace and
 * personal ones), workspace notes (document blocks) and files, merged by score. A
 * workspace named (in the body or the filters) must be the caller's: 404 otherwise,
 * as in the documents query.
 */
export function createContextService(engine: SearchEngine, workspaces: WorkspaceService) {
  return {
    async build(ownerId: string, body: typeof BuildContextBody.static): Promise<BuiltContext> {
      const limit = body.limit ?? 10;
      const filtersSeen = inspectFilters(body.filters, "filters");
      checkFilterCount(filtersSeen.count, "filters");
      const scope = scopeWorkspace(body, filtersSeen.workspaceId, "filters");
      if (scope !== undefined) await workspaces.requireOwned(ownerId, scope);
      const workspaceId = body.workspace_id ?? body.workspaceId;
      const include = { memories: true, notes: false, files: false, ...body.include };
      const searches: Array<Promise<SearchResult>> = [];
      if (include.memories) {
        const filters = {
          ...toSearchFilters(body.filters),
          ...(workspaceId ? { workspaceId, includeUnscoped: true } : {}),
        };
        searches.push(
          engine.search({
            ownerId,
            query: body.query,
            kinds: ["memory"],
            filters,
            limit,
            minScore: body.minScore,
            signals: body.signals,
          }),
        );
      }
      const workspaceKinds: SearchKind[] = [
        ...(include.notes ? ["block" as const] : []),
        ...(include.files ? ["file" as const] : []),
      ];
      if (workspaceKinds.length) {
        searches.push(
          engine.search({
            ownerId,
            query: body.query,
            kinds: workspaceKinds,
            filters: workspaceId ? { workspaceId } : {},
            limit,
            minScore: body.minScore,
            signals: body.signals,
          }),
        );
      }
      const results = await Promise.all(searches);
      const hits: SearchHit[] = results
        .flatMap((r) => r.hits)
        .sort((a, b) => b.score - a.score)
        .slice(0, limit);
      const items = hits.flatMap((hit) => {
        const type = TYPE_OF[hit.kind];
        if (!type) return [];
        const id = hit.kind === "memory" ? hit.sourceId : hit.itemId;
        return [
          {
            type,
            id,
            score: hit.score,
            content: hit.text,
            ...(hit.kind === "block" ? { documentId: hit.sourceId } : {}),
            workspaceId: hit.workspaceId,
          },
        ];
      });
      const semantic = results.some((r) => r.mode === "semantic");
      return {
        query: body.query,
        mode: semantic ? "semantic" : "fulltext_fallback",
        strategy: semantic ? (results.some((r) => r.strategy === "hybrid") ? "hybrid" : "vector") : "fulltext",
        signals: SEARCH_SIGNALS.filter((signal) => results.some((r) => r.signals.includes(signal))),
        items,
        contextText: renderContextText(items),
      };
    },
  };
}
export type ContextService = ReturnType<typeof createContextService>;
