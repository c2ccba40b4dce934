import { Elysia } from "elysia";
import { notImplemented } from "../errors/app-error";
import { ErrorBody } from "../errors/model";
import type { RouteCatalog } from "./route-catalog";

/**
 * Routes of the spec (§4) that later issues build. Until then each answers
 * 501 `not_implemented` naming itself, so a client can tell "not yet" from "no such
 * route" (404) and "wrong method" (405).
 */
export const PENDING_SPEC_ROUTES: ReadonlyArray<{ method: string; path: string; summary: string }> = [
  { method: "POST", path: "/v1/chat/completions", summary: "Chat completions with memory" },
  { method: "GET", path: "/v1/models", summary: "Models" },
  { method: "GET", path: "/v1/usage", summary: "Usage for the current month" },
  { method: "GET", path: "/v1/credits", summary: "Credits for the current month" },
  { method: "POST", path: "/api/v1/webhooks/:webhookId/sync", summary: "Identity-provider sync and onboarding webhooks" },
  { method: "POST", path: "/v1/workspaces/:workspaceId/files/upload-url", summary: "Presigned file upload URL" },
  { method: "POST", path: "/v1/uploads/start", summary: "Start an upload session" },
  { method: "POST", path: "/v1/uploads/:uploadId/part", summary: "Upload a part" },
  { method: "POST", path: "/v1/uploads/:uploadId/complete", summary: "Complete an upload" },
];

/**
 * A 501 stub for every pending route the app does not serve yet. Call it after every
 * domain plugin is registered: a route that has landed (whatever its parameter names)
 * gets no stub.
 */
export function pendingRoutes(catalog: RouteCatalog) {
  const app = new Elysia({ name: "pending-routes", normalize: false });
  for (const { method, path, summary } of PENDING_SPEC_ROUTES) {
    if (catalog.has(method, path)) continue;
    app.route(
      method,
      path,
      () => {
        throw notImplemented(`${method} ${path}: is not implemented on this server yet`);
      },
      { response: { 501: ErrorBody }, detail: { tags: ["not implemented yet"], summary: `${summary} (answers 501 until built)` } },
    );
  }
  return app;
}
