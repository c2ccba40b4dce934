import type { AuthService } from "../auth/service";
import { authPlugin } from "../auth/plugin";
import { errorResponses } from "../shared/error-body";
import { createRouter } from "../lib/router";
import {
  CreateMemoryBody,
  DeletedMemory,
  ListProposalsQuery,
  MemoryHistory,
  MemoryProposal,
  MemoryProposalList,
  ListMemoriesQuery,
  ProposalParams,
  MemoryList,
  MemoryParams,
  MemoryRecord,
  SearchMemoriesBody,
  SearchMemoriesResponse,
  UpdateMemoryBody,
  MEMORY_BODY_LIMIT,
} from "./model";
import { searchHeaders, type Outbox } from "../search";
import type { Principal } from "../auth/service";
import type { Executor } from "../db/store";
import { createMemoryHistoryRepository, type MemorySource } from "./history-repository";
import { createMemoryProposalRepository } from "./proposals-repository";
import { createMemoryRepository, storedContentKey } from "./repository";
import { createMemoryWrites } from "./writes";
import type { MemoryService } from "./service";

/** Where a write over HTTP comes from: the web app's session, else the API. */
const sourceOf = (principal: Principal): MemorySource => ({ kind: principal.method === "app_session" ? "app" : "api" });

/** Routes of memories (docs/api.md#core-and-memories). */
export function memoryRoutes(auth: AuthService, memories: MemoryService) {
  return createRouter({ prefix: "/v1/memories" })
    .use(authPlugin(auth))
    .post(
      "/",
      async ({ principal, body, set }) => {
        const { memory, duplicate } = await memories.store(principal.userId, body, sourceOf(principal));
        // An exact duplicate (same workspace, same normalised text) writes nothing: 200 with the memory already stored.
        set.status = duplicate ? 200 : 201;
        if (duplicate) set.headers["x-svc-duplicate"] = "true";
        return memory;
      },
      {
        auth: "memory:write",
        body: CreateMemoryBody,
        bodyLimit: MEMORY_BODY_LIMIT,
        response: { 201: MemoryRecord, 200: MemoryRecord, ...errorResponses() },
        detail: {
          tags: ["memories"],
          summary: "Store a memory",
          description:
            "201 with the new memory; 200 with the memory already stored (and `X-Svc-Duplicate: true`) when the user has an exact duplicate " +
            "in the same workspace: the same text once Unicode-normalised (NFKC), trimmed, whitespace collapsed and case-folded. Client-encrypted content is exempt.",
        },
      },
    )
    .get("/", async ({ principal, query }) => memories.list(principal.userId, query), {
      auth: "memory:read",
      query: ListMemoriesQuery,
      response: { 200: MemoryList, ...errorResponses() },
      detail: {
        tags: ["memories"],
        summary: "List memories, newest first (filters: workspaceId, session_id, from, to)",
      },
    })
    .post(
      "/search",
      async ({ principal, body, set }) => {
        const { response, ...result } = await memories.search(principal.userId, body);
        Object.assign(set.headers, searchHeaders(result));
        return response;
      },
      {
        auth: "memory:read",
        body: SearchMemoriesBody,
        response: { 200: SearchMemoriesResponse, ...errorResponses() },
        detail: { tags: ["memories"], summary: "Search memories (hybrid: full text + vectors)" },
      },
    )
    .get("/proposals", async ({ principal, query }) => memories.proposals.list(principal.userId, query), {
      auth: "memory:read",
      query: ListProposalsQuery,
      response: { 200: MemoryProposalList, ...errorResponses() },
      detail: {
        tags: ["memories"],
        summary:
          "Pending proposals: changes automatic formation (capture) would make to memories a person wrote, each with the memory as it is now",
      },
    })
    .post(
      "/proposals/:id/accept",
      async ({ principal, params }) => memories.proposals.accept(principal.userId, params.id),
      {
        auth: "memory:write",
        params: ProposalParams,
        response: { 200: MemoryProposal, ...errorResponses() },
        detail: {
          tags: ["memories"],
          summary: "Accept a proposal: the change is applied, its history source extraction with the proposal's id",
          description:
            "409 `conflict` when the memory was changed or deleted since it was proposed (nothing is applied then), or the proposal was decided already.",
        },
      },
    )
    .post(
      "/proposals/:id/reject",
      async ({ principal, params }) => memories.proposals.reject(principal.userId, params.id),
      {
        auth: "memory:write",
        params: ProposalParams,
        response: { 200: MemoryProposal, ...errorResponses() },
        detail: { tags: ["memories"], summary: "Reject a proposal: the memory stays as it is" },
      },
    )
    .get("/:id/history", async ({ principal, params }) => memories.history(principal.userId, params.id), {
      auth: "memory:read",
      params: MemoryParams,
      response: { 200: MemoryHistory, ...errorResponses() },
      detail: {
        tags: ["memories"],
        summary: "A memory's versions (created, updated, deleted) and where each came from",
      },
    })
    .get("/:id", async ({ principal, params }) => memories.get(principal.userId, params.id), {
      auth: "memory:read",
      params: MemoryParams,
      response: { 200: MemoryRecord, ...errorResponses() },
      detail: { tags: ["memories"], summary: "Get one memory" },
    })
    .patch(
      "/:id",
      async ({ principal, params, body }) => memories.update(principal.userId, params.id, body, sourceOf(principal)),
      {
        auth: "memory:write",
        params: MemoryParams,
        body: UpdateMemoryBody,
        bodyLimit: MEMORY_BODY_LIMIT,
        response: { 200: MemoryRecord, ...errorResponses() },
        detail: { tags: ["memories"], summary: "Edit a memory's content and/or metadata" },
      },
    )
    .delete(
      "/:id",
      async ({ principal, params }) => memories.delete(principal.userId, params.id, sourceOf(principal)),
      {
        auth: "memory:read",
        params: MemoryParams,
        response: { 200: DeletedMemory, ...errorResponses() },
        detail: { tags: ["memories"], summary: "Delete a memory (scope memory:read, as the spec says)" },
      },
    );
}

// What other domains use of memories: their rows as a user's export carries them, and what an
// import does with the rows it inserts, inside its own transaction.
export { MEMORY_TABLE } from "./repository";

/**
 * An import's side of the memory write: rows are inserted in bulk by the import (with their
 * exported ids and dates, and `contentKey`), then `recordImported` gives them what any new
 * memory gets (first version, source `import`; its index entry and its conversation's
 * previous memory queued).
 */
export function memoryImportWrites(outbox: Outbox) {
  const repo = createMemoryRepository();
  const writes = createMemoryWrites({
    repo,
    history: createMemoryHistoryRepository(),
    outbox,
    proposals: createMemoryProposalRepository(),
  });
  return {
    /** The exact-duplicate key stored beside a row (not exported: derived from the content). */
    contentKey: storedContentKey,
    /** Whether the owner has a memory of the same text in that workspace. */
    async isDuplicate(tx: Executor, ownerId: string, workspaceId: string | null, content: string): Promise<boolean> {
      return (await repo.duplicateOf(tx, ownerId, workspaceId, content)) !== null;
    },
    /** The rows of `ids` just inserted, recorded as new memories; how many sources were queued. */
    async recordImported(tx: Executor, ownerId: string, ids: string[], now: string): Promise<number> {
      const inserted = await repo.getMany(tx, ownerId, ids);
      const rows = [...inserted.values()].sort((a, b) => a.seq - b.seq);
      return writes.recordInserted(tx, ownerId, rows, { kind: "import" }, now);
    },
  };
}
export type MemoryImportWrites = ReturnType<typeof memoryImportWrites>;
