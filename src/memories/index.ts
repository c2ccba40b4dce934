import type { AuthService } from "../auth/service";
import { authPlugin } from "../auth/plugin";
import { errorResponses } from "../shared/error-body";
import { createRouter } from "../lib/router";
import { CreateMemoryBody, DeletedMemory, ListMemoriesQuery, MemoryList, MemoryParams, MemoryRecord, SearchMemoriesBody, SearchMemoriesResponse, UpdateMemoryBody, MEMORY_BODY_LIMIT } from "./model";
import { searchHeaders } from "../search";
import type { MemoryService } from "./service";

/** Routes of spec §4 "Memories". */
export function memoryRoutes(auth: AuthService, memories: MemoryService) {
  return createRouter({ prefix: "/v1/memories" })
    .use(authPlugin(auth))
    .post(
      "/",
      async ({ principal, body, set }) => {
        set.status = 201;
        return memories.create(principal.userId, body);
      },
      {
        auth: "memory:write",
        body: CreateMemoryBody,
        bodyLimit: MEMORY_BODY_LIMIT,
        response: { 201: MemoryRecord, ...errorResponses() },
        detail: { tags: ["memories"], summary: "Store a memory" },
      },
    )
    .get("/", async ({ principal, query }) => memories.list(principal.userId, query), {
      auth: "memory:read",
      query: ListMemoriesQuery,
      response: { 200: MemoryList, ...errorResponses() },
      detail: { tags: ["memories"], summary: "List memories, newest first (filters: workspaceId, session_id, from, to)" },
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
    .get("/:id", async ({ principal, params }) => memories.get(principal.userId, params.id), {
      auth: "memory:read",
      params: MemoryParams,
      response: { 200: MemoryRecord, ...errorResponses() },
      detail: { tags: ["memories"], summary: "Get one memory" },
    })
    .patch("/:id", async ({ principal, params, body }) => memories.update(principal.userId, params.id, body), {
      auth: "memory:write",
      params: MemoryParams,
      body: UpdateMemoryBody,
      bodyLimit: MEMORY_BODY_LIMIT,
      response: { 200: MemoryRecord, ...errorResponses() },
      detail: { tags: ["memories"], summary: "Edit a memory's content and/or metadata" },
    })
    .delete("/:id", async ({ principal, params }) => memories.delete(principal.userId, params.id), {
      auth: "memory:read",
      params: MemoryParams,
      response: { 200: DeletedMemory, ...errorResponses() },
      detail: { tags: ["memories"], summary: "Delete a memory (scope memory:read, as the spec says)" },
    });
}
