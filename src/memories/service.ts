import type { Executor, Store } from "../db/store";
import { badRequest, conflict, notFound, payloadTooLarge } from "../shared/app-error";
import { oneOf } from "../shared/aliases";
import type { Cursors } from "../shared/cursors";
import { newId } from "../lib/ids";
import { parseIntegerParam } from "../shared/query";
import { toSearchFilters } from "../shared/search-filters";
import { timestampToIso } from "../shared/timestamp";
import {
  MAX_CONTENT_BYTES,
  MAX_METADATA_BYTES,
  type MemoryRecord,
  type CreateMemoryBody,
  type SearchMemoriesBody,
  type UpdateMemoryBody,
} from "./model";
import type {
  HitSignals,
  Outbox,
  SearchEngine,
  SearchMode,
  SearchSignal,
  SearchStrategy,
  SearchTimings,
} from "../search";
import type { ListFilters, ListPosition, MemoryRepository, MemoryRow } from "./repository";
import type { MemoryHistoryRepository, MemorySource, MemoryVersion } from "./history-repository";
import type { MemoryVersionRecord } from "./model";
import { createMemoryProposals } from "./proposals";
import { createMemoryProposalRepository } from "./proposals-repository";
import { createMemoryWrites } from "./writes";
import { toMemoryRecord } from "./record";

export { toMemoryRecord };

const proposalRepo = createMemoryProposalRepository();

export interface MemoryServiceDeps {
  repo: MemoryRepository;
  /** Each memory's versions and their sources (`GET /v1/memories/:id/history`). */
  history: MemoryHistoryRepository;
  outbox: Outbox;
  /** The read path over the memory source: memory hits carry their stored row. */
  engine: SearchEngine<{ memory: MemoryRow }>;
  store: Store;
  cursors: Cursors;
  /** The workspace ownership check (the workspaces service's `requireOwned`). */
  workspaces: { requireOwned(ownerId: string, workspaceId: string, tx?: Executor): Promise<unknown> };
}

const encoder = new TextEncoder();

type ScoredRecord = MemoryRecord & { score: number; signals: HitSignals };
/** Both documented shapes at once (docs/api.md#core-and-memories): `results` and `data` hold the same list. */
export type MemorySearchResponse = {
  results: ScoredRecord[];
  data: ScoredRecord[];
  mode: SearchMode;
  strategy: SearchStrategy;
  signals: SearchSignal[];
};

/** A version as the history route answers it: the source's kind, and where it came from beside it. */
function toVersionRecord(v: MemoryVersion): MemoryVersionRecord {
  const { kind, ...from } = v.source;
  return {
    version: v.version,
    event: v.event,
    reason: v.event,
    content: v.content,
    metadata: v.metadata,
    workspaceId: v.workspaceId,
    changedAt: v.at,
    source: kind,
    ...from,
  };
}

/**
 * The memory list's cursors: the page position (the last memory's `createdAt` and id, as
 * JSON), sealed per owner by `cursors`. Named `memories:created` since the list is by
 * creation date: a cursor of the earlier (insertion-order) list is refused, not misread.
 */
const LIST_NAME = "memories:created";

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A list bound as a stored ISO time: a YYYY-MM-DD day stands for its first (from) or last (to) millisecond, UTC. */
function timeBound(field: "from" | "to", value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const text = DAY.test(value) ? `${value}T${field === "from" ? "00:00:00.000" : "23:59:59.999"}Z` : value;
  const ms = Date.parse(text);
  if (Number.isNaN(ms) || !/^\d{4}-\d{2}-\d{2}T/.test(text))
    throw badRequest(`${field}: '${value}' is not an ISO date-time or a YYYY-MM-DD day`);
  return new Date(ms).toISOString();
}

function listFilters(query: { workspaceId?: string; session_id?: string; from?: string; to?: string }): ListFilters {
  const filters = {
    workspaceId: query.workspaceId,
    sessionId: query.session_id,
    from: timeBound("from", query.from),
    to: timeBound("to", query.to),
  };
  if (filters.from && filters.to && filters.from > filters.to) throw badRequest("to: is before from");
  return filters;
}

function checkSizes(content: string | undefined, metadata: Record<string, unknown> | undefined): void {
  if (content !== undefined) {
    if (!content.trim()) throw badRequest("content: must not be blank");
    const bytes = encoder.encode(content).byteLength;
    if (bytes > MAX_CONTENT_BYTES)
      throw payloadTooLarge(`content: is ${bytes} bytes; the limit is ${MAX_CONTENT_BYTES} bytes (50 KB)`);
  }
  if (metadata !== undefined && encoder.encode(JSON.stringify(metadata)).byteLength > MAX_METADATA_BYTES) {
    throw payloadTooLarge(`metadata: is larger than ${MAX_METADATA_BYTES} bytes`);
  }
}

export function createMemoryService({ repo, history, outbox, engine, store, cursors, workspaces }: MemoryServiceDeps) {
  const writes = createMemoryWrites({ repo, history, outbox, proposals: proposalRepo });
  const proposals = createMemoryProposals({ repo, history, proposals: proposalRepo, writes, store, cursors });
  const decodeCursor = (ownerId: string, cursor: string): ListPosition => {
    let position: unknown;
    try {
      position = JSON.parse(cursors.decode(ownerId, LIST_NAME, cursor, "cursor"));
    } catch (error) {
      if (error instanceof SyntaxError) position = null;
      else throw error;
    }
    const [createdAt, id] = Array.isArray(position) ? position : [];
    if (typeof createdAt !== "string" || typeof id !== "string")
      throw badRequest("cursor: is not a cursor returned by this API");
    return { createdAt, id };
  };
  const encodeCursor = (ownerId: string, row: MemoryRow) =>
    cursors.encode(ownerId, LIST_NAME, JSON.stringify([row.createdAt, row.id]));

  async function storeMemory(
    ownerId: string,
    body: typeof CreateMemoryBody.static,
    source: MemorySource = { kind: "api" },
  ): Promise<{ memory: MemoryRecord; duplicate: boolean }> {
    checkSizes(body.content, body.metadata);
    const metadata = body.metadata ?? {};
    const now = new Date().toISOString();
    // The time the memory refers to (mem0's `timestamp`); `updatedAt` is when it was stored.
    const createdAt = body.timestamp === undefined ? now : timestampToIso(body.timestamp, "timestamp");
    const row = {
      ownerId,
      id: body.id ?? newId("mem"),
      content: body.content,
      metadata,
      workspaceId: oneOf<string>(body, ["workspaceId", "workspace_id"]) ?? null,
      sessionId: oneOf<string>(body, ["session_id", "sessionId"]) ?? null,
      createdAt,
      updatedAt: now,
    };
    const stored = await store.transaction(async (tx) => {
      // Another user's workspace answers like a missing one (404), as on every workspace route.
      if (row.workspaceId !== null) await workspaces.requireOwned(ownerId, row.workspaceId, tx);
      const outcome = await writes.insert(tx, row, source);
      if (outcome.inserted) return { existing: null, inserted: outcome.inserted };
      return outcome.existing ? { existing: outcome.existing, inserted: null } : null;
    });
    if (!stored) throw conflict(`id: a memory with id '${row.id}' already exists`);
    return stored.existing
      ? { memory: toMemoryRecord(stored.existing), duplicate: true }
      : { memory: toMemoryRecord(stored.inserted!), duplicate: false };
  }

  return {
    /** The one memory write, for writers that hold their own transaction (formation, import). */
    writes,
    /** What automatic formation proposed to change in memories a person wrote (`/v1/memories/proposals`). */
    proposals,

    /** Stores a memory; an exact duplicate (memories/content-key.ts) answers the memory already stored instead. */
    async create(
      ownerId: string,
      body: typeof CreateMemoryBody.static,
      source: MemorySource = { kind: "api" },
    ): Promise<MemoryRecord> {
      return (await storeMemory(ownerId, body, source)).memory;
    },

    /**
     * Stores a memory, or finds its exact duplicate (same owner and workspace, same
     * normalised text): `duplicate` then says no row was written and `memory` is the one
     * stored before. The unique index decides, so concurrent writers store it once.
     */
    store: storeMemory,

    /**
     * `GET /v1/memories/:id/history`: the memory's versions, oldest first; still answered
     * once it is deleted (its last version says so). A memory stored before history was kept
     * shows one `created` version of its current content, source `unknown`.
     */
    async history(ownerId: string, id: string): Promise<{ id: string; data: MemoryVersionRecord[] }> {
      const versions = await history.list(store.db, ownerId, id);
      if (versions.length) return { id, data: versions.map(toVersionRecord) };
      const row = await repo.get(store.db, ownerId, id);
      if (!row) throw notFound(`memory '${id}' not found`);
      return {
        id,
        data: [
          toVersionRecord({
            version: 1,
            event: "created",
            content: row.content,
            metadata: row.metadata,
            workspaceId: row.workspaceId,
            at: row.createdAt,
            source: { kind: "unknown" },
          }),
        ],
      };
    },

    async list(
      ownerId: string,
      query: { limit?: string; cursor?: string; workspaceId?: string; session_id?: string; from?: string; to?: string },
    ) {
      const limit = parseIntegerParam("limit", query.limit, { min: 1, max: 1000, fallback: 100 });
      const filters = listFilters(query);
      // Another user's workspace answers like a missing one (404), as on every workspace route.
      if (filters.workspaceId !== undefined) await workspaces.requireOwned(ownerId, filters.workspaceId);
      const cursor = query.cursor;
      const before = cursor ? decodeCursor(ownerId, cursor) : null;
      const rows = await repo.listPage(store.db, ownerId, before, limit + 1, filters);
      const page = rows.slice(0, limit);
      const hasMore = rows.length > limit;
      return {
        data: page.map(toMemoryRecord),
        nextCursor: hasMore ? encodeCursor(ownerId, page[page.length - 1]) : null,
        hasMore,
      };
    },

    async get(ownerId: string, id: string): Promise<MemoryRecord> {
      const row = await repo.get(store.db, ownerId, id);
      if (!row) throw notFound(`memory '${id}' not found`);
      return toMemoryRecord(row);
    },

    /**
     * New content and/or metadata (which replaces the whole object), recorded in the history;
     * the memory is indexed again, and so are those that have it as context. New content that
     * duplicates another memory of the same workspace is refused (409), as on create.
     */
    async update(
      ownerId: string,
      id: string,
      body: typeof UpdateMemoryBody.static,
      source: MemorySource = { kind: "api" },
    ): Promise<MemoryRecord> {
      if (body.content === undefined && body.metadata === undefined)
        throw badRequest("body: give content, metadata or both");
      checkSizes(body.content, body.metadata);
      const outcome = await store.transaction((tx) =>
        writes.update(tx, ownerId, id, { content: body.content, metadata: body.metadata }, source),
      );
      if (outcome.updated) return toMemoryRecord(outcome.updated);
      if (outcome.why === "missing") throw notFound(`memory '${id}' not found`);
      throw conflict("content: another memory of this workspace already says this");
    },

    /**
     * A delete by the user erases the memory's text everywhere, its history included: one
     * `deleted` version without content is all that is left. A memory already deleted by
     * extraction (whose history keeps the text, for the user to review) is erased the same way.
     */
    async delete(ownerId: string, id: string, source: MemorySource = { kind: "api" }) {
      const deleted = await store.transaction((tx) => writes.delete(tx, ownerId, id, source, { erase: true }));
      if (!deleted) throw notFound(`memory '${id}' not found`);
      return { id, deleted: true as const, success: true as const };
    },

    /**
     * The owner's memories most like `query`, their workspace beside them: in `workspaceId`
     * when given, in no workspace when null (personal memories only), anywhere when undefined.
     */
    async similar(
      ownerId: string,
      query: string,
      limit: number,
      workspaceId: string | null | undefined,
    ): Promise<MemoryRow[]> {
      const filters = workspaceId === undefined ? {} : workspaceId === null ? { unscopedOnly: true } : { workspaceId };
      const result = await engine.search({ ownerId, query, kinds: ["memory"], filters, limit });
      return result.hits.map((hit) => hit.record);
    },

    async search(
      ownerId: string,
      body: typeof SearchMemoriesBody.static,
    ): Promise<{ response: MemorySearchResponse; timings: SearchTimings; indexLag: number }> {
      const result = await engine.search({
        ownerId,
        query: body.query,
        kinds: ["memory"],
        filters: toSearchFilters(body.filters),
        limit: body.limit ?? 10,
        minScore: body.minScore,
        signals: body.signals,
      });
      // Every hit was read back from the store of record by the search (a memory deleted
      // meanwhile is no hit): its row comes with it.
      const results = result.hits.map((hit) => ({
        ...toMemoryRecord(hit.record),
        score: hit.score,
        signals: hit.signals,
      }));
      return {
        response: {
          results,
          data: results,
          mode: result.mode,
          strategy: result.strategy,
          signals: [...result.signals],
        },
        timings: result.timings,
        indexLag: result.indexLag,
      };
    },
  };
}
export type MemoryService = ReturnType<typeof createMemoryService>;
