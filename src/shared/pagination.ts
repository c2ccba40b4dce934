import { t } from "elysia";
import type { Cursors } from "./cursors";
import { IntegerParam, parseIntegerParam } from "./query";

/** Page sizes of the workspace lists (workspaces, documents, notes, threads, messages, index/raw). */
export const PAGE_SIZE = { fallback: 50, max: 200 } as const;

/** `?limit=&cursor=` of a paginated list. */
export const PageQueryFields = {
  limit: t.Optional(IntegerParam(`page size: default ${PAGE_SIZE.fallback}, at most ${PAGE_SIZE.max}`)),
  cursor: t.Optional(
    t.String({ minLength: 1, maxLength: 1024, description: "the next-page cursor of the previous page" }),
  ),
};
export const PageQuery = t.Object(PageQueryFields);
export type PageRequest = { limit?: string; cursor?: string };

/** Lists answered as a bare array (spec) carry the next page's cursor in this header; absent on the last page. */
export const NEXT_CURSOR_HEADER = "x-next-cursor";

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
  hasMore: boolean;
}

/**
 * One list's paging for one owner: `start` decodes the request (limit, and the position
 * after which the page starts), `page` cuts `limit + 1` fetched rows into a page and a
 * cursor at its last row. Cursors are opaque and bound to the owner and the list name
 * (which names the workspace or thread too), so one is refused anywhere else.
 */
export function pager(cursors: Cursors, ownerId: string, list: string) {
  return {
    start(request: PageRequest): { limit: number; after: string | null } {
      const limit = parseIntegerParam("limit", request.limit, {
        min: 1,
        max: PAGE_SIZE.max,
        fallback: PAGE_SIZE.fallback,
      });
      return {
        limit,
        after: request.cursor === undefined ? null : cursors.decode(ownerId, list, request.cursor, "cursor"),
      };
    },
    /** The cursor of the page that starts after `position`. */
    cursorAt: (position: string) => cursors.encode(ownerId, list, position),
    page<T>(rows: T[], limit: number, positionOf: (row: T) => string): Page<T> {
      const items = rows.slice(0, limit);
      const hasMore = rows.length > limit;
      return {
        items,
        hasMore,
        nextCursor: hasMore ? cursors.encode(ownerId, list, positionOf(items[items.length - 1])) : null,
      };
    },
  };
}

/** A sequence-number position, checked on the way in (a cursor decodes only to what we encoded, but stay strict). */
export function seqAfter(after: string | null): number {
  if (after === null) return 0;
  const seq = Number(after);
  return Number.isSafeInteger(seq) && seq >= 0 ? seq : 0;
}
