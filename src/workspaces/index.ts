import { t } from "elysia";
import { authPlugin } from "../auth/plugin";
import type { AuthService } from "../auth/service";
import { errorResponses } from "../shared/error-body";
import { decryptPlugin, type EncryptionOptions } from "../crypto/plugin";
import { createRouter } from "../lib/router";
import { WorkspaceParams } from "../shared/schemas";
import {
  CreateWorkspaceBody,
  DeletedWorkspace,
  RenameWorkspaceBody,
  Workspace,
  WorkspaceContents,
  WorkspaceEnvelope,
} from "./model";
import type { WorkspaceRemoval } from "./removal";
import { NEXT_CURSOR_HEADER, PageQuery } from "../shared/pagination";
import type { WorkspaceService } from "./service";
import type { Executor } from "../db/store";
import { createWorkspaceRepository, type WorkspaceRepository } from "./repository";

/** Workspaces: list, create, read, rename, and delete with all they hold. */
export function workspaceRoutes(
  auth: AuthService,
  workspaces: WorkspaceService,
  removal: WorkspaceRemoval,
  encryption: EncryptionOptions,
) {
  return createRouter({ prefix: "/v1/workspaces" })
    .use(authPlugin(auth))
    .use(decryptPlugin(encryption))
    .get(
      "/",
      async ({ principal, query, set }) => {
        const page = await workspaces.list(principal.userId, query);
        if (page.nextCursor) set.headers[NEXT_CURSOR_HEADER] = page.nextCursor;
        return page.items;
      },
      {
        auth: "memory:read",
        decrypt: true,
        query: PageQuery,
        response: { 200: t.Array(Workspace), ...errorResponses() },
        detail: {
          tags: ["workspaces"],
          summary:
            "List my workspaces, oldest first (?limit= default 50, at most 200; X-Next-Cursor names the next page's ?cursor=)",
        },
      },
    )
    .post(
      "/",
      async ({ principal, body, set }) => {
        set.status = 201;
        return workspaces.create(principal.userId, body.name);
      },
      {
        auth: "memory:write",
        decrypt: true,
        body: CreateWorkspaceBody,
        response: { 201: Workspace, ...errorResponses() },
        detail: { tags: ["workspaces"], summary: "Create a workspace" },
      },
    )
    .get(
      "/:workspaceId",
      async ({ principal, params }) => ({ workspace: await workspaces.get(principal.userId, params.workspaceId) }),
      {
        auth: "memory:read",
        decrypt: true,
        params: WorkspaceParams,
        response: { 200: WorkspaceEnvelope, ...errorResponses() },
        detail: { tags: ["workspaces"], summary: "Get one workspace" },
      },
    )
    .patch(
      "/:workspaceId",
      async ({ principal, params, body }) => ({
        workspace: await workspaces.rename(principal.userId, params.workspaceId, body.name),
      }),
      {
        auth: "memory:write",
        decrypt: true,
        params: WorkspaceParams,
        body: RenameWorkspaceBody,
        response: { 200: WorkspaceEnvelope, ...errorResponses() },
        detail: { tags: ["workspaces"], summary: "Rename a workspace" },
      },
    )
    .get("/:workspaceId/contents", ({ principal, params }) => removal.contents(principal.userId, params.workspaceId), {
      auth: "memory:read",
      params: WorkspaceParams,
      response: { 200: WorkspaceContents, ...errorResponses() },
      detail: { tags: ["workspaces"], summary: "How much a workspace holds, by kind (what a delete would remove)" },
    })
    .delete("/:workspaceId", ({ principal, params }) => removal.remove(principal.userId, params.workspaceId), {
      auth: "memory:write",
      params: WorkspaceParams,
      response: { 200: DeletedWorkspace, ...errorResponses() },
      detail: {
        tags: ["workspaces"],
        summary:
          "Delete a workspace and everything in it: documents, notes, chats, files and their bytes, memories and their history, extraction jobs, and their search entries",
      },
    });
}

// What other domains use of workspaces: their rows as a user's export carries them, and the
// writes capture and the import make inside their own transaction.
export { ARTIFACT_TABLE, WORKSPACE_TABLE } from "./repository";

/** Capture's writes to a conversation's workspace, in its own transaction (the composition hands the repository over). */
export type WorkspaceWrites = Pick<WorkspaceRepository, "insertIfAbsent" | "ownerOf" | "lock">;

const workspaceRepo = createWorkspaceRepository();

/**
 * Makes the workspace `id` of `ownerId` when missing, in the caller's transaction: whether it
 * was `created`, was there (`existing`), or is another user's (`taken`: ids are unique across users).
 */
export async function ensureWorkspace(
  tx: Executor,
  workspace: { ownerId: string; id: string; name: string },
  now = new Date().toISOString(),
): Promise<"created" | "existing" | "taken"> {
  if (await workspaceRepo.insertIfAbsent(tx, { ...workspace, createdAt: now, updatedAt: now })) return "created";
  return (await workspaceRepo.ownerOf(tx, workspace.id)) === workspace.ownerId ? "existing" : "taken";
}
