/**
 * What a search may be narrowed by, as the search engine takes it: equality tests on
 * the indexed items. Here, below the search side, because several domains build these
 * filters from their API bodies (memories, context, the documents query, completions).
 */
export interface SearchFilters {
  workspaceId?: string;
  /** With `workspaceId`: also match items that belong to no workspace (personal memories). */
  includeUnscoped?: boolean;
  sessionId?: string;
  documentType?: string;
  metadata?: Record<string, string | number | boolean | null>;
  /** Restrict to these sources (e.g. one thread). */
  sourceIds?: string[];
}
