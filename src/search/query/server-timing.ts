/** Where a search spent its time, in milliseconds (logged at debug level; see `serverTiming`). */
export interface SearchTimings {
  /** Reading the owner's own state: pending sources, their items, the term statistics. */
  own: number;
  embed: number;
  search: number;
}

/**
 * Renders timings as a `Server-Timing` header value: reading the owner's own state and
 * the search itself, query embedding included. The embedding's own time stays in the debug
 * log: it says whether the query vector came from the cache, which no client needs (and
 * which told other users' searches apart while the cache was shared).
 */
export const serverTiming = (t: SearchTimings) =>
  `own;dur=${t.own.toFixed(2)}, search;dur=${(t.embed + t.search).toFixed(2)}`;

/** Response headers of a search: timings, and the index lag (sources the index does not reflect yet; the search included them). */
export function searchHeaders(result: { timings: SearchTimings; indexLag: number }): Record<string, string> {
  const headers: Record<string, string> = { "server-timing": serverTiming(result.timings) };
  if (result.indexLag > 0) headers["x-svc-index-lag"] = String(result.indexLag);
  return headers;
}
