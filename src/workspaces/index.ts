import { t } from "elysia";
import { authPlugin } from "../auth/plugin";
import type { AuthService } from "../auth/service";
import { errorResponses } from "../errors/model";
import { createRouter } from "../lib/router";
import { CreateWorkspaceBody, Workspace, WorkspaceEnvelope, WorkspaceParams } from "./model";
import type { WorkspaceService } from "./service";

/** Routes of spec §4 "Workspaces". */
export function workspaceRoutes(auth: AuthService, workspaces: WorkspaceService) {
  return createRouter({ prefix: "/v1/workspaces" })
    .use(authPlugin(auth))
    .get("/", async ({ principal }) => workspaces.list(principal.userId), {
      auth: "memory:read",
      response: { 200: t.Array(Workspace), ...errorResponses() },
      detail: { tags: ["workspaces"], summary: "List my workspaces, oldest first" },
    })
    .post(
      "/",
      async ({ principal, body, set }) => {
        set.status = 201;
        return workspaces.create(principal.userId, body.name);
      },
      {
        auth: "memory:write",
        body: CreateWorkspaceBody,
        response: { 201: Workspace, ...errorResponses() },
        detail: { tags: ["workspaces"], summary: "Create a workspace" },
      },
    )
    .get("/:workspaceId", async ({ principal, params }) => ({ workspace: await workspaces.get(principal.userId, params.workspaceId) }), {
      auth: "memory:read",
      params: WorkspaceParams,
      response: { 200: WorkspaceEnvelope, ...errorResponses() },
      detail: { tags: ["workspaces"], summary: "Get one workspace" },
    });
}
