import { authPlugin } from "../auth/plugin";
import type { AuthService } from "../auth/service";
import type { EncryptionOptions } from "../crypto/plugin";
import { fileSealKeys } from "../files/seal-keys";
import { errorsFor } from "../shared/error-body";
import { createRouter } from "../lib/router";
import {
  PART_BODY_LIMIT,
  PartUploaded,
  StartUploadBody,
  UploadCompleted,
  UploadParams,
  UploadPartBody,
  UploadStarted,
} from "./model";
import type { UploadService } from "./service";

/**
 * Upload sessions (docs/files.md#upload-sessions). Deviation: the contract serves them without authentication;
 * here they need a bearer with `files:write`, and a session is its starter's alone.
 * In reverse-proxy mode a session's parts and its file are sealed with the caller's client
 * key: every request of the session needs it (X-Client-Key, or escrowed).
 */
export function uploadRoutes(auth: AuthService, uploads: UploadService, encryption: EncryptionOptions) {
  const sealKeys = fileSealKeys(encryption);
  const keyFor = (userId: string, request: Request) => () => sealKeys.forSealed(userId, request);
  return createRouter({ prefix: "/v1/uploads" })
    .use(authPlugin(auth))
    .post(
      "/start",
      async ({ principal, body, request }) =>
        uploads.start(principal.userId, body, !!(await sealKeys.forWrite(principal.userId, request))),
      {
        auth: "files:write",
        body: StartUploadBody,
        response: { 200: UploadStarted, ...errorsFor(400, 401, 403, 404, 413, 415, 429, 500, 503) },
        detail: { tags: ["files"], summary: "Start an upload session (at most 20 open per user; 1 hour idle expiry)" },
      },
    )
    .post(
      "/:uploadId/part",
      async ({ principal, params, body, request }) =>
        uploads.part(principal.userId, params.uploadId, body, keyFor(principal.userId, request)),
      {
        auth: "files:write",
        params: UploadParams,
        body: UploadPartBody,
        bodyLimit: PART_BODY_LIMIT,
        response: { 200: PartUploaded, ...errorsFor(400, 401, 403, 404, 409, 413, 415, 500, 503) },
        detail: { tags: ["files"], summary: "Upload one part: {partNumber, data (base64, ≤ 8 MB decoded)}" },
      },
    )
    .post(
      "/:uploadId/complete",
      async ({ principal, params, request }) =>
        uploads.complete(principal.userId, params.uploadId, keyFor(principal.userId, request)),
      {
        auth: "files:write",
        params: UploadParams,
        response: { 200: UploadCompleted, ...errorsFor(400, 401, 403, 404, 409, 413, 500, 503) },
        detail: { tags: ["files"], summary: "Join the parts in order into a file of the workspace" },
      },
    );
}
