import { authPlugin } from "../auth/plugin";
import type { AuthService } from "../auth/service";
import { errorsFor } from "../errors/model";
import { createRouter } from "../lib/router";
import { PartUploaded, StartUploadBody, UploadCompleted, UploadParams, UploadPartBody, UploadStarted } from "./model";
import type { UploadService } from "./service";

/**
 * Upload sessions (spec §4). Deviation: the spec serves them without authentication;
 * here they need a bearer with `files:write`, and a session is its starter's alone.
 */
export function uploadRoutes(auth: AuthService, uploads: UploadService) {
  return createRouter({ prefix: "/v1/uploads" })
    .use(authPlugin(auth))
    .post("/start", async ({ principal, body }) => uploads.start(principal.userId, body), {
      auth: "files:write",
      body: StartUploadBody,
      response: { 200: UploadStarted, ...errorsFor(400, 401, 403, 404, 413, 415, 429, 500, 503) },
      detail: { tags: ["files"], summary: "Start an upload session (at most 20 open per user; 1 hour idle expiry)" },
    })
    .post("/:uploadId/part", async ({ principal, params, body }) => uploads.part(principal.userId, params.uploadId, body), {
      auth: "files:write",
      params: UploadParams,
      body: UploadPartBody,
      response: { 200: PartUploaded, ...errorsFor(400, 401, 403, 404, 409, 413, 415, 500, 503) },
      detail: { tags: ["files"], summary: "Upload one part: {partNumber, data (base64, ≤ 8 MB decoded)}" },
    })
    .post("/:uploadId/complete", async ({ principal, params }) => uploads.complete(principal.userId, params.uploadId), {
      auth: "files:write",
      params: UploadParams,
      response: { 200: UploadCompleted, ...errorsFor(400, 401, 403, 404, 409, 413, 500, 503) },
      detail: { tags: ["files"], summary: "Join the parts in order into a file of the workspace" },
    });
}
