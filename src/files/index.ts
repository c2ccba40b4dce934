import { authPlugin } from "../auth/plugin";
import type { AuthService } from "../auth/service";
import { decryptPlugin, type EncryptionOptions } from "../crypto/plugin";
import { errorDocs, errorResponses } from "../shared/error-body";
import { createRouter } from "../lib/router";
import { WorkspaceParams } from "../shared/schemas";
import { downloadResponse } from "./download";
import {
  DeletedFile,
  FileInfo,
  FileList,
  FileListQuery,
  FileParams,
  SignedQuery,
  UploadUrl,
  UploadUrlBody,
} from "./model";
import { fileSealKeys } from "./seal-keys";
import type { FileService } from "./service";
import { createFileRepository, type FileRepository } from "./repository";

/**
 * Files of a workspace (docs/files.md#routes).
 * The presigned PUT carries no bearer token: its signature is the authorization.
 * `publicUrl` is where clients reach this server (MNEMO_PUBLIC_URL, else the listening
 * address): presigned URLs are built on it, never on the request's `Host`.
 * In reverse-proxy mode file bytes are sealed with the caller's client key (`./seal-keys`).
 */
export function fileRoutes(
  auth: AuthService,
  files: FileService,
  encryption: EncryptionOptions,
  publicUrl: () => string,
) {
  const sealKeys = fileSealKeys(encryption);
  return (
    createRouter({ prefix: "/v1/workspaces/:workspaceId/files" })
      .use(authPlugin(auth))
      // File metadata is a PKMS response: a client that stored encrypted names reads them back opened.
      .use(decryptPlugin(encryption))
      .post(
        "/upload-url",
        async ({ principal, params, body, request }) => {
          // Refused up front when the PUT could not be sealed (its own X-Client-Key or the escrowed key is used then).
          await sealKeys.forWrite(principal.userId, request);
          return files.createUploadUrl(principal.userId, params.workspaceId, body, publicUrl());
        },
        {
          auth: "files:write",
          params: WorkspaceParams,
          body: UploadUrlBody,
          response: { 200: UploadUrl, ...errorResponses() },
          detail: { tags: ["files"], summary: "A presigned URL to PUT a file's bytes to (15 minutes)" },
        },
      )
      .put(
        "/:key",
        async ({ params, query, request, set }) => {
          set.status = 201;
          return files.putSigned({
            workspaceId: params.workspaceId,
            key: params.key,
            expires: query.expires,
            signature: query.signature,
            contentType: request.headers.get("content-type"),
            contentLength: request.headers.get("content-length"),
            body: request.body,
            sealKey: (ownerId) => sealKeys.forWrite(ownerId, request),
          });
        },
        {
          params: FileParams,
          query: SignedQuery,
          // Raw bytes, read by the files service under MNEMO_MAX_FILE_BYTES: no JSON parsing, no outer bound.
          bodyLimit: "streamed",
          response: { 201: FileInfo, ...errorResponses() },
          detail: {
            tags: ["files"],
            summary:
              "Upload the bytes to a presigned URL, once (no Authorization; the signature authorizes; a used URL is 409)",
            security: [],
          },
        },
      )
      .get("/", async ({ principal, params, query }) => files.list(principal.userId, params.workspaceId, query), {
        auth: "memory:read",
        decrypt: true,
        params: WorkspaceParams,
        query: FileListQuery,
        response: { 200: FileList, ...errorResponses() },
        detail: { tags: ["files"], summary: "List a workspace's files, oldest first" },
      })
      .get(
        "/:key",
        async ({ principal, params, request }) => {
          const openKey = await sealKeys.forRead(principal.userId, request);
          return downloadResponse(
            await files.download(principal.userId, params.workspaceId, params.key, openKey),
            request.headers,
          );
        },
        {
          auth: "memory:read",
          params: FileParams,
          detail: {
            tags: ["files"],
            summary: "Download a file (stored content type; single byte ranges; If-None-Match, If-Range)",
            responses: {
              200: {
                description:
                  "The bytes, with the stored content type; a sealed file (reverse-proxy mode) without X-Proxy-Decrypt and a key that opens it: its sealed bytes, as application/vnd.mnemo.sealed-file",
                content: { "application/octet-stream": { schema: { type: "string" as const, format: "binary" } } },
              },
              206: {
                description: "The requested byte range (`Range: bytes=a-b`)",
                content: { "application/octet-stream": { schema: { type: "string" as const, format: "binary" } } },
              },
              304: { description: "`If-None-Match` names the current ETag" },
              ...errorDocs([400, 401, 403, 404, 409, 416, 500, 503]),
            },
          },
        },
      )
      .delete(
        "/:key",
        async ({ principal, params }) => files.delete(principal.userId, params.workspaceId, params.key),
        {
          auth: "files:write",
          params: FileParams,
          response: { 200: DeletedFile, ...errorResponses() },
          detail: { tags: ["files"], summary: "Delete a file and its search entries" },
        },
      )
  );
}

// What other domains use of files: their rows as a user's export carries them, and the bytes an
// export made `--with-files` gives back to files that have none.
export { FILE_BLOCK_TABLE, FILE_TABLE } from "./repository";

/** Which of a user's files lack their bytes, and attaching the bytes restored for one. */
export const fileBytesRestore: Pick<FileRepository, "withoutBytes" | "attachBytes"> = createFileRepository();
