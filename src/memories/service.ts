import type { Executor, Store } from "../db/store";
import { badRequest, conflict, notFound, payloadTooLarge } from "../errors/app-error";
import { agree, oneOf } from "../lib/aliases";
import type { Cursors } from "../lib/cursors";
import { newId } from "../lib/ids";
import { parseIntegerParam } from "../lib/query";
import type { Outbox, SearchEngine, SearchTimings, SearchFilters, SearchMode, SearchStrategy } from "../search";
import { MAX_CONTENT_BYTES, MAX_FILTER_KEYS, MAX_METADATA_BYTES, type MemoryRecord, type CreateMemoryBody, type SearchMemoriesBody, type SearchFilters as SearchFiltersSchema } from "./model";
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

type Scalar = string | number | boolean | null;
/** Keys of `filters` that are not metadata conditions. */
const NAMED_FILTERS = new Set(["workspaceId", "workspace_id", "session_id", "sessionId", "metadata"]);

/**
 * Maps the API's filter object onto the engine's equality filters. `field` names the
 * object in errors (`filters`, or `metadata.filters` in the documents query).
 */
export function toSearchFilters(filters: typeof SearchFiltersSchema.static | undefined, field = "filters"): SearchFilters {
  if (!filters) return {};
  const metadata = filters.metadata ?? {};
  // Every key is one more condition on every candidate: the count is capped, the keys
  // inside `metadata` included (the schema caps each object on its own).
  const conditions = Object.keys(filters).length - (filters.metadata ? 1 : 0) + Object.keys(metadata).length;
  if (conditions > MAX_FILTER_KEYS) {
    throw badRequest(`${field}: has ${conditions} keys (counting those in ${field}.metadata); at most ${MAX_FILTER_KEYS} are allowed`);
  }
  const merged = new Map(Object.entries(filters as Record<string, Scalar>).filter(([key]) => !NAMED_FILTERS.has(key)));
  // `{topic: "x"}` and `{metadata: {topic: "x"}}` are two spellings of one condition.
  for (const [key, value] of Object.entries(metadata)) {
    merged.set(key, agree({ field: `${field}.${key}`, value: merged.get(key) }, { field: `${field}.metadata.${key}`, value }) as Scalar);
  }
  return {
    workspaceId: oneOf<string>(filters, ["workspaceId", "workspace_id"], `${field}.`),
    sessionId: oneOf<string>(filters, ["session_id", "sessionId"], `${field}.`),
    metadata: merged.size ? Object.fromEntries(merged) : undefined,
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
    async create(ownerId: string, body: typeof CreateMemoryBody.static): Promise<MemoryRecord> {
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
        createdAt: now,
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

    async list(ownerId: string, query: { limit?: string; cursor?: string }) {
      const limit = parseIntegerParam("limit", query.limit, { min: 1, max: 1000, fallback: 100 });
      const cursor = query.cursor;
      const before = cursor ? decodeCursor(ownerId, cursor) : null;
      const rows = await repo.listPage(store.db, ownerId, before, limit + 1);
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
