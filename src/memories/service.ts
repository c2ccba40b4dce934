import type { Executor, Store } from "../db/store";
import { badRequest, conflict, notFound, payloadTooLarge } from "../shared/app-error";
import { oneOf } from "../shared/aliases";
import type { Cursors } from "../shared/cursors";
import { newId } from "../lib/ids";
import { parseIntegerParam } from "../shared/query";
import { toSearchFilters } from "../shared/search-filters";
import { MAX_CONTENT_BYTES, MAX_METADATA_BYTES, type MemoryRecord, type CreateMemoryBody, type SearchMemoriesBody } from "./model";
import type { Outbox, SearchEngine, SearchMode, SearchStrategy, SearchTimings } from "../search";
import type { ListPosition, MemoryRepository, MemoryRow } from "./repository";

export interface MemoryServiceDeps {
  repo: MemoryRepository;
  outbox: Outbox;
  /** The read path over the memory source: memory hits carry their stored row. */
  engine: SearchEngine<{ memory: MemoryRow }>;
  store: Store;
  cursors: Cursors;
  /** The workspace ownership check (the workspaces service's `requireOwned`). */
  workspaces: { requireOwned(ownerId: string, workspaceId: string, tx?: Executor): Promise<unknown> };
}

const encoder = new TextEncoder();

/** A memory's own time, when it is given: a date (midnight UTC), or a date-time with its zone. */
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))?$/i;
/** 9999-12-31T23:59:59Z. */
const MAX_UNIX_SECONDS = 253_402_300_799;
const TIMESTAMP_PROBLEM = "timestamp: must be an ISO 8601 date or date-time with its zone (2024-05-01T09:30:00Z) or Unix seconds";

/** The ISO time of a `timestamp`: an ISO 8601 string, or Unix seconds (a number, or a string of digits). */
export function parseMemoryTimestamp(value: string | number): string {
  let ms = NaN;
  if (typeof value !== "string" && typeof value !== "number") throw badRequest(TIMESTAMP_PROBLEM);
  if (typeof value === "number" || /^\d{1,12}(?:\.\d+)?$/.test(value)) {
    const seconds = Number(value);
    if (Number.isFinite(seconds) && seconds >= 0 && seconds <= MAX_UNIX_SECONDS) ms = Math.round(seconds * 1000);
  } else {
    const match = ISO_8601.exec(value);
    const [year, month, day] = match ? match.slice(1, 4).map(Number) : [];
    // The calendar date exists (no 2024-02-31), whatever the parser would make of it.
    if (match && new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day && month >= 1 && month <= 12) ms = Date.parse(value.replace(" ", "T"));
  }
  if (!Number.isFinite(ms)) throw badRequest(TIMESTAMP_PROBLEM);
  return new Date(ms).toISOString();
}

type ScoredRecord = MemoryRecord & { score: number };
/** Both of the spec's descriptions at once: `results` and `data` hold the same list. */
export type MemorySearchResponse = { results: ScoredRecord[]; data: ScoredRecord[]; mode: SearchMode; strategy: SearchStrategy };

/** The public form of a stored memory. */
export function toMemoryRecord(row: MemoryRow): MemoryRecord {
  return {
    id: row.id,
    ownerId: row.ownerId,
    projectId: row.workspaceId ?? "default",
    content: row.content,
    metadata: row.metadata,
    status: row.status,
    workspaceId: row.workspaceId,
    session_id: row.sessionId,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/**
 * The memory list's cursors: the page position (the last memory's `createdAt` and id, as
 * JSON), sealed per owner by `cursors`. Named `memories:created` since the list is by
 * creation date: a cursor of the earlier (insertion-order) list is refused, not misread.
 */
const LIST_NAME = "memories:created";

export function createMemoryService({ repo, outbox, engine, store, cursors, workspaces }: MemoryServiceDeps) {
  const decodeCursor = (ownerId: string, cursor: string): ListPosition => {
    let position: unknown;
    try {
      position = JSON.parse(cursors.decode(ownerId, LIST_NAME, cursor, "cursor"));
    } catch (error) {
      if (error instanceof SyntaxError) position = null;
      else throw error;
    }
    const [createdAt, id] = Array.isArray(position) ? position : [];
    if (typeof createdAt !== "string" || typeof id !== "string") throw badRequest("cursor: is not a cursor returned by this API");
    return { createdAt, id };
  };
  const encodeCursor = (ownerId: string, row: MemoryRow) => cursors.encode(ownerId, LIST_NAME, JSON.stringify([row.createdAt, row.id]));

  return {
    async create(ownerId: string, body: typeof CreateMemoryBody.static & { timestamp?: string | number }): Promise<MemoryRecord> {
      if (!body.content.trim()) throw badRequest("content: must not be blank");
      const bytes = encoder.encode(body.content).byteLength;
      if (bytes > MAX_CONTENT_BYTES) throw payloadTooLarge(`content: is ${bytes} bytes; the limit is ${MAX_CONTENT_BYTES} bytes (50 KB)`);
      const metadata = body.metadata ?? {};
      if (encoder.encode(JSON.stringify(metadata)).byteLength > MAX_METADATA_BYTES) {
        throw payloadTooLarge(`metadata: is larger than ${MAX_METADATA_BYTES} bytes`);
      }
      const now = new Date().toISOString();
      const row = {
        ownerId,
        id: body.id ?? newId("mem"),
        content: body.content,
        metadata,
        workspaceId: oneOf<string>(body, ["workspaceId", "workspace_id"]) ?? null,
        sessionId: oneOf<string>(body, ["session_id", "sessionId"]) ?? null,
        // The memory's own time when given (when it was said or learnt); stored as it happened.
        createdAt: body.timestamp === undefined ? now : parseMemoryTimestamp(body.timestamp),
        updatedAt: now,
      };
      const stored = await store.transaction(async (tx) => {
        // Another user's workspace answers like a missing one (404), as on every workspace route.
        if (row.workspaceId !== null) await workspaces.requireOwned(ownerId, row.workspaceId, tx);
        const inserted = await repo.insert(tx, row);
        if (!inserted) return null;
        await outbox.enqueue(tx, { ownerId, kind: "memory", sourceId: row.id }, "insert");
        // The previous memory of this conversation gains this one as context.
        const { previous } = await repo.neighbours(tx, inserted);
        if (previous) await outbox.enqueue(tx, { ownerId, kind: "memory", sourceId: previous.id }, "sync");
        return inserted;
      });
      if (!stored) throw conflict(`id: a memory with id '${row.id}' already exists`);
      return toMemoryRecord(stored);
    },

    /** A page, newest first; `within.workspaceId` keeps one workspace's (another user's answers like a missing one). */
    async list(ownerId: string, query: { limit?: string; cursor?: string }, within: { workspaceId?: string } = {}) {
      const limit = parseIntegerParam("limit", query.limit, { min: 1, max: 1000, fallback: 100 });
      const cursor = query.cursor;
      const before = cursor ? decodeCursor(ownerId, cursor) : null;
      if (within.workspaceId !== undefined) await workspaces.requireOwned(ownerId, within.workspaceId);
      const rows = await repo.listPage(store.db, ownerId, before, limit + 1, within.workspaceId);
      const page = rows.slice(0, limit);
      const hasMore = rows.length > limit;
      return { data: page.map(toMemoryRecord), nextCursor: hasMore ? encodeCursor(ownerId, page[page.length - 1]) : null, hasMore };
    },

    async get(ownerId: string, id: string): Promise<MemoryRecord> {
      const row = await repo.get(store.db, ownerId, id);
      if (!row) throw notFound(`memory '${id}' not found`);
      return toMemoryRecord(row);
    },

    async delete(ownerId: string, id: string) {
      const deleted = await store.transaction(async (tx) => {
        const row = await repo.get(tx, ownerId, id);
        if (!row) return false;
        const { previous, next, later } = await repo.neighbours(tx, row);
        await repo.delete(tx, ownerId, id);
        await outbox.enqueue(tx, { ownerId, kind: "memory", sourceId: id }, "sync");
        // The memories that had it as context (one before, two after) are indexed again.
        for (const neighbour of [previous, next, later]) {
          if (neighbour) await outbox.enqueue(tx, { ownerId, kind: "memory", sourceId: neighbour.id }, "sync");
        }
        return true;
      });
      if (!deleted) throw notFound(`memory '${id}' not found`);
      return { id, deleted: true as const, success: true as const };
    },

    async search(ownerId: string, body: typeof SearchMemoriesBody.static): Promise<{ response: MemorySearchResponse; timings: SearchTimings; indexLag: number }> {
      const result = await engine.search({
        ownerId,
        query: body.query,
        kinds: ["memory"],
        filters: toSearchFilters(body.filters),
        limit: body.limit ?? 10,
        minScore: body.minScore,
      });
      // Every hit was read back from the store of record by the search (a memory deleted
      // meanwhile is no hit): its row comes with it.
      const results = result.hits.map((hit) => ({ ...toMemoryRecord(hit.record), score: hit.score }));
      return { response: { results, data: results, mode: result.mode, strategy: result.strategy }, timings: result.timings, indexLag: result.indexLag };
    },
  };
}
export type MemoryService = ReturnType<typeof createMemoryService>;
