import { t } from "elysia";
import { PageQueryFields } from "../shared/pagination";
import { WorkspaceId } from "../shared/schemas";

/** A file key as issued by upload-url or upload completion (`file_` + a sortable id). */
export const FileKey = t.String({ minLength: 1, maxLength: 128, description: "a file key (file_…)" });
/** A MIME type such as `text/markdown` or `application/pdf; charset=…`. */
export const ContentType = t.String({
  minLength: 3,
  maxLength: 255,
  pattern: "^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+(\\s*;.*)?$",
  description: "a MIME type, e.g. text/markdown",
});
export const FileName = t.String({ minLength: 1, maxLength: 512, description: "the file's name, e.g. notes.md" });

export const UploadUrlBody = t.Object({ filename: FileName, contentType: ContentType });
export const UploadUrl = t.Object({
  url: t.String({
    description:
      "presigned: PUT the bytes here once, with exactly this Content-Type, no Authorization, within 15 minutes",
  }),
  key: FileKey,
  method: t.Literal("PUT"),
  omniUri: t.String({ description: "svc://files/<workspaceId>/<key>" }),
  expiresAt: t.String({ format: "date-time" }),
});

export const FileParams = t.Object({ workspaceId: WorkspaceId, key: FileKey });
export const SignedQuery = t.Object({
  expires: t.Optional(t.String({ maxLength: 32, description: "unix seconds, as issued" })),
  signature: t.Optional(t.String({ maxLength: 128, description: "HMAC-SHA256, as issued" })),
});

/** Whether a file's text is in the search index (src/files/text.ts textIndexing). */
export const FileIndexing = t.Object({
  status: t.Union([t.Literal("pending"), t.Literal("indexed"), t.Literal("not_indexed")], {
    description:
      "pending: a PDF whose text is being read; indexed: its text is (or is about to be) searchable; not_indexed: stored and downloadable, not searchable",
  }),
  reason: t.Optional(
    t.Union(
      [
        t.Literal("type"),
        t.Literal("sealed"),
        t.Literal("file_too_large"),
        t.Literal("too_many_pages"),
        t.Literal("text_too_large"),
        t.Literal("memory_limit"),
        t.Literal("time_limit"),
        t.Literal("unreadable"),
      ],
      {
        description:
          "why not indexed: type (no text Mnemo reads), sealed (stored sealed with the client key), file_too_large, too_many_pages, text_too_large, memory_limit, time_limit, unreadable",
      },
    ),
  ),
  message: t.Optional(t.String({ description: "the reason in a sentence, naming the bound" })),
});

export const FileInfo = t.Object({
  key: FileKey,
  name: t.String(),
  type: t.String({ description: "the content type the file was uploaded with" }),
  size: t.Integer({ description: "bytes of the file as uploaded" }),
  sha256: t.String({ description: "hex SHA-256 of the bytes as stored (of a sealed file: of its sealed bytes)" }),
  createdAt: t.String({ format: "date-time" }),
  omniUri: t.String(),
  sealed: t.Optional(
    t.Literal(true, {
      description:
        "present when the bytes are stored sealed with the owner's client key (reverse-proxy mode); download with X-Proxy-Decrypt: true to open them",
    }),
  ),
  indexing: FileIndexing,
});
export const FileList = t.Object({
  files: t.Array(FileInfo),
  nextCursor: t.Union([t.String(), t.Null()]),
  hasMore: t.Boolean(),
});
export const FileListQuery = t.Object(PageQueryFields);
export const DeletedFile = t.Object({ deleted: t.Literal(true), key: FileKey });
