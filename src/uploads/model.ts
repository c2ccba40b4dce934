import { t } from "elysia";
import { ContentType, FileKey, FileName } from "../files/model";
import { MB, type BodyLimit } from "../lib/body-limits";
import { WorkspaceId } from "../shared/schemas";
import { UPLOAD_LIMITS } from "./service";

export const StartUploadBody = t.Object({ workspaceId: WorkspaceId, filename: FileName, contentType: ContentType });
export const UploadStarted = t.Object({ uploadId: t.String({ description: "upl_ + a sortable id" }) });
export const UploadParams = t.Object({ uploadId: t.String({ minLength: 1, maxLength: 128 }) });
export const UploadPartBody = t.Object({
  // Range-checked by the service: the schema's own message for a bounded integer names no bounds.
  partNumber: t.Number({
    description: `an integer from 1 to ${UPLOAD_LIMITS.parts}; parts are joined in this order; re-sending a number replaces that part`,
  }),
  data: t.String({
    maxLength: Math.ceil(UPLOAD_LIMITS.partBytes / 3) * 4 + 4,
    description: "the part's bytes, base64 (standard or URL-safe), at most 8 MB decoded",
  }),
});
/** An upload part's body: 8 MB decoded is 11.2 MB of base64. */
export const PART_BODY_LIMIT: BodyLimit = { bytes: 12 * MB };
export const PartUploaded = t.Object({ uploaded: t.Literal(true) });
export const UploadCompleted = t.Object({ key: FileKey, completed: t.Literal(true) });
