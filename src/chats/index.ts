import { t } from "elysia";
import { authPlugin } from "../auth/plugin";
import type { AuthService } from "../auth/service";
import { errorResponses } from "../shared/error-body";
import { bindingFor, type SealMap } from "../crypto/binding";
import { decryptPlugin, type EncryptionOptions } from "../crypto/plugin";
import { oneOf } from "../shared/aliases";
import { createRouter } from "../lib/router";
import { WorkspaceParams } from "../shared/schemas";
import { NEXT_CURSOR_HEADER, PageQuery } from "../shared/pagination";
import {
  AppendMessageBody,
  CreateThreadBody,
  DeletedThread,
  MESSAGE_BODY_LIMIT,
  Message,
  MessageCreated,
  PatchThreadBody,
  Success,
  Thread,
  ThreadCreated,
  ThreadParams,
} from "./model";
import type { ChatService } from "./service";
import { createChatRepository, type ChatRepository } from "./repository";

const tags = ["chats"];
const base = "/v1/workspaces/:workspaceId/chats";

/** A page of messages: each `encryptedContent` belongs to its own message. */
const messageSeals: SealMap =
  ({ response, userId }) =>
  (path) => {
    const message =
      Array.isArray(response) && typeof path[0] === "number" ? (response[path[0]] as { id?: unknown }) : undefined;
    return path.length === 2 && path[1] === "encryptedContent" && typeof message?.id === "string"
      ? bindingFor(userId, "chat-message", message.id)("encryptedContent")
      : null;
  };

/** Routes of chat threads (docs/api.md#chat-threads) (scope `chat`). */
export function chatRoutes(auth: AuthService, chats: ChatService, encryption: EncryptionOptions) {
  return createRouter()
    .use(authPlugin(auth))
    .use(decryptPlugin(encryption))
    .get(
      base,
      async ({ principal, params, query, set }) => {
        const page = await chats.list(principal.userId, params.workspaceId, query);
        if (page.nextCursor) set.headers[NEXT_CURSOR_HEADER] = page.nextCursor;
        return page.items;
      },
      {
        auth: "chat",
        decrypt: true,
        params: WorkspaceParams,
        query: PageQuery,
        response: { 200: t.Array(Thread), ...errorResponses() },
        detail: {
          tags,
          summary:
            "List chat threads, oldest first (?limit= default 50, at most 200; X-Next-Cursor names the next page's ?cursor=)",
        },
      },
    )
    .post(
      base,
      async ({ principal, params, body, set }) => {
        set.status = 201;
        return chats.create(principal.userId, params.workspaceId, body);
      },
      {
        auth: "chat",
        decrypt: true,
        params: WorkspaceParams,
        body: CreateThreadBody,
        response: { 201: ThreadCreated, ...errorResponses() },
        detail: { tags, summary: "Create a chat thread" },
      },
    )
    .patch(
      `${base}/:threadId`,
      async ({ principal, params, body }) => {
        await chats.patch(principal.userId, params.workspaceId, params.threadId, body);
        return { success: true as const };
      },
      {
        auth: "chat",
        decrypt: true,
        params: ThreadParams,
        body: PatchThreadBody,
        response: { 200: Success, ...errorResponses() },
        detail: { tags, summary: "Rename a thread and/or replace its metadata" },
      },
    )
    .delete(
      `${base}/:threadId`,
      ({ principal, params }) => chats.remove(principal.userId, params.workspaceId, params.threadId),
      {
        auth: "chat",
        params: ThreadParams,
        response: { 200: DeletedThread, ...errorResponses() },
        detail: { tags, summary: "Delete a thread, its messages (and their search entries) and its extraction jobs" },
      },
    )
    .get(
      `${base}/:threadId/messages`,
      async ({ principal, params, query, set }) => {
        const page = await chats.listMessages(principal.userId, params.workspaceId, params.threadId, query);
        if (page.nextCursor) set.headers[NEXT_CURSOR_HEADER] = page.nextCursor;
        return page.items;
      },
      {
        auth: "chat",
        decrypt: messageSeals,
        params: ThreadParams,
        query: PageQuery,
        response: { 200: t.Array(Message), ...errorResponses() },
        detail: {
          tags,
          summary:
            "List a thread's messages in creation order (?limit= default 50, at most 200; X-Next-Cursor names the next page's ?cursor=)",
        },
      },
    )
    .post(
      `${base}/:threadId/messages`,
      async ({ principal, params, body, set, writeKey }) => {
        set.status = 201;
        const key = await writeKey(
          principal.userId,
          oneOf<string>(body, ["client_key", "clientKey"]),
          body.client_key !== undefined ? "client_key" : "clientKey",
        );
        return chats.append(principal.userId, params.workspaceId, params.threadId, body, key);
      },
      {
        auth: "chat",
        decrypt: true,
        params: ThreadParams,
        body: AppendMessageBody,
        bodyLimit: MESSAGE_BODY_LIMIT,
        response: { 201: MessageCreated, ...errorResponses() },
        detail: { tags, summary: "Append a message (parentId defaults to the thread's latest message)" },
      },
    );
}

// What other domains use of chats: threads and messages as a user's export carries them, the
// writes capture and the chat import make to a thread inside their own transaction, and which
// messages are a workspace's (the derived index's status).
export { MESSAGE_TABLE, THREAD_TABLE, workspaceMessageSources } from "./repository";

/** A thread's reads and writes inside a caller's transaction: its lock, the thread, its messages. */
export type ThreadWrites = Pick<
  ChatRepository,
  "getThreads" | "lockThread" | "insertThread" | "messageKeysPage" | "appendMessage" | "getMessages"
>;

export const threadWrites: ThreadWrites = createChatRepository();
