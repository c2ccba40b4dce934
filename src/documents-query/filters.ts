import { badRequest } from "../shared/app-error";
import { oneOf } from "../shared/aliases";
import { countFilterValues } from "../shared/search-filters";

/**
 * The documents query's `filter`: only the `eq` operator exists; anything else (`ne`, or
 * a key such as `document_type` put beside `eq`) is a 400 naming it, never ignored.
 * Returns the document type it asks for, its metadata equalities and their count.
 */
export function inspectQueryFilter(filter: Record<string, unknown> | undefined) {
  if (!filter) return { count: 0, documentType: undefined, metadata: {} };
  for (const key of Object.keys(filter)) {
    if (key === "eq") continue;
    throw badRequest(
      `filter.${key}: is not a filter operator; the one supported is eq (e.g. {"eq": {"document_type": "note"}})`,
    );
  }
  const eq = (filter.eq ?? {}) as Record<string, unknown>;
  const documentType = oneOf<string>(eq, ["document_type", "documentType"], "filter.eq.");
  const { document_type: _a, documentType: _b, ...metadata } = eq;
  const count = countFilterValues(metadata, "filter.eq") + (documentType === undefined ? 0 : 1);
  return { count, documentType, metadata: metadata as Record<string, string | number | boolean | null> };
}
