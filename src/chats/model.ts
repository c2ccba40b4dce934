import { t } from "elysia";
import { MB, type BodyLimit } from "../lib/body-limits";
import { FreeObject, WorkspaceId } from "../shared/schemas";

/** Message content limit (docs/api.md#requests-and-limits): 200 KB of UTF-8. */
export const MAX_MESSAGE_BYTES = 200 * 1024;
/** A message's body: 200 KB of content, up to several times that once escaped. */
export const MESSAGE_BODY_LIMIT: BodyLimit = { bytes: 2 * MB };
export const DEFAULT_THREAD_TITLE = "New chat";
/** Thread metadata limit: it is returned by every thread listing, so it stays small (413 naming the field). */
export const MAX_THREAD_METADATA_BYTES = 64 * 1024;

const Title = t.String({ minLength: 1, maxLength: 500 });
const Role = t.Union([t.Literal("user"), t.Literal("assistant")], { description: "user or assistant" });

export const CreateThreadBody = t.Object({
  title: t.Optional(t.String({ maxLength: 500, description: `default '${DEFAULT_THREAD_TITLE}'` })),
  metadata: t.Optional(
    t.Object({}, { additionalProperties: true, description: "arbitrary JSON object, at most 64 KB" }),
  ),
});
export const PatchThreadBody = t.Object({
  title: t.Optional(Title),
  metadata: t.Optional(
    t.Object({}, { additionalProperties: true, description: "replaces the thread's metadata; at most 64 KB" }),
  ),
});
export const AppendMessageBody = t.Object({
  // Checked by the service: TypeBox's message for a union of literals names no values.
  role: t.String({ description: "user or assistant" }),
  content: t.String({ minLength: 1, description: "at most 200 KB of UTF-8" }),
  parentId: t.Optional(
    t.String({ minLength: 1, maxLength: 256, description: "a message of this thread; default the thread's latest" }),
  ),
  client_key: t.Optional(
    t.String({
      description: "a 32-byte client key (64 hex or base64/base64url): the content is stored only as encryptedContent",
    }),
  ),
  clientKey: t.Optional(t.String({ description: "camelCase spelling of client_key" })),
});

export const ThreadCreated = t.Object({
  id: t.String(),
  title: t.String(),
  createdAt: t.String({ format: "date-time" }),
});
export const Thread = t.Object({
  id: t.String(),
  title: t.String(),
  messageCount: t.Integer(),
  metadata: FreeObject,
  createdAt: t.String({ format: "date-time" }),
  updatedAt: t.String({ format: "date-time" }),
});
export type Thread = typeof Thread.static;
export const MessageCreated = t.Object({
  id: t.String(),
  role: Role,
  parentId: t.Union([t.String(), t.Null()]),
  createdAt: t.String({ format: "date-time" }),
});
export const Message = t.Object({
  id: t.String(),
  role: Role,
  content: t.Optional(
    t.String({
      description:
        "the plaintext; absent when the message is held encrypted (or its decrypted text, with X-Proxy-Decrypt)",
    }),
  ),
  encryptedContent: t.Optional(t.String({ description: "iv:tag:ct of a message written with a client key" })),
  parentId: t.Union([t.String(), t.Null()], { description: "the message this one answers; null for a thread's first" }),
  createdAt: t.String({ format: "date-time" }),
});
export type Message = typeof Message.static;

export const ThreadParams = t.Object({
  workspaceId: WorkspaceId,
  threadId: t.String({ minLength: 1, maxLength: 256 }),
});
export const Success = t.Object({ success: t.Literal(true) });
export const DeletedThread = t.Object({
  id: t.String(),
  deleted: t.Literal(true),
  removed: t.Object({
    messages: t.Integer(),
    jobs: t.Integer({ description: "extraction jobs of the thread's captured conversation" }),
  }),
});
