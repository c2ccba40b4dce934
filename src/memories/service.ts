import type { Store } from "../db/store";
import { badRequest, conflict, notFound, payloadTooLarge } from "../errors/app-error";
import { newId } from "../lib/ids";
import { parseIntegerParam } from "../lib/query";
import type { Outbox } from "../search/outbox";
import type { SearchEngine, SearchTimings } from "../search/engine";
import type { SearchFilters, SearchMode, SearchStrategy } from "../search/types";
import { MAX_CONTENT_BYTES, MAX_METADATA_BYTES, type MemoryRecord, type CreateMemoryBody, type SearchMemoriesBody, type SearchFilters as SearchFiltersSchema } from "./model";
import type { MemoryRepository, MemoryRow } from "./repository";

export interface MemoryServiceDeps {
  repo: MemoryRepository;
  outbox: Outbox;
  engine: SearchEngine;
  store: Store;
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

/** Maps the API's filter object onto the engine's equality filters. */
export function toSearchFilters(filters: typeof SearchFiltersSchema.static | undefined): SearchFilters {
  if (!filters) return {};
  const { workspaceId, workspace_id, session_id, sessionId, metadata, ...extra } = filters;
  const merged = { ...(extra as Record<string, string | number | boolean | null>), ...(metadata ?? {}) };
  return {
    workspaceId: workspaceId ?? workspace_id,
    sessionId: session_id ?? sessionId,
    metadata: Object.keys(merged).length ? merged : undefined,
  };
}

const encodeCursor = (seq: number) => Buffer.from(`m1:${seq}`).toString("base64url");
function decodeCursor(cursor: string): number {
  const match = /^m1:(\d+)$/.exec(Buffer.from(cursor, "base64url").toString());
  if (!match) throw badRequest("cursor: is not a cursor returned by this API");
  return Number(match[1]);
}

export function createMemoryService({ repo, outbox, engine, store }: MemoryServiceDeps) {
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
        workspaceId: body.workspaceId ?? body.workspace_id ?? null,
        sessionId: body.session_id ?? body.sessionId ?? null,
        createdAt: now,
        updatedAt: now,
      };
      const stored = await store.transaction(async (tx) => {
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
      const before = cursor ? decodeCursor(cursor) : Number.MAX_SAFE_INTEGER;
      const rows = await repo.listPage(store.db, ownerId, before, limit + 1);
      const page = rows.slice(0, limit);
      const hasMore = rows.length > limit;
      return { data: page.map(toMemoryRecord), nextCursor: hasMore ? encodeCursor(page[page.length - 1].seq) : null, hasMore };
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
      // SQLite is the truth: a hit whose memory was deleted meanwhile is dropped.
      const rows = await repo.getMany(store.db, ownerId, result.hits.map((hit) => hit.sourceId));
      const results = result.hits.flatMap((hit) => {
        const row = rows.get(hit.sourceId);
        return row ? [{ ...toMemoryRecord(row), score: hit.score }] : [];
      });
      return { response: { results, data: results, mode: result.mode, strategy: result.strategy }, timings: result.timings, indexLag: result.indexLag };
    },
  };
}
export type MemoryService = ReturnType<typeof createMemoryService>;
