import { badRequest, notFound, payloadTooLarge } from "../errors/app-error";
import { newId } from "../lib/ids";
import type { Outbox } from "../search/outbox";
import type { WorkspaceService } from "../workspaces/service";
import { DEFAULT_THREAD_TITLE, MAX_MESSAGE_BYTES, type AppendMessageBody, type CreateThreadBody, type Message, type PatchThreadBody, type Thread } from "./model";
import type { ChatRepository, MessageRow, ThreadRow } from "./repository";

export interface ChatServiceDeps {
  repo: ChatRepository;
  outbox: Outbox;
  workspaces: WorkspaceService;
  transaction: <T>(fn: () => T) => T;
}

const toThread = (row: ThreadRow): Thread => ({
  id: row.id, title: row.title, messageCount: row.messageCount, metadata: row.metadata, createdAt: row.createdAt, updatedAt: row.updatedAt,
});
const toMessage = (row: MessageRow): Message => ({ id: row.id, role: row.role, content: row.content, parentId: row.parentId, createdAt: row.createdAt });

/**
 * Native chat threads. They are not documents (no blocks, no markdown), but every
 * append re-syncs the thread in the search index so its messages are findable.
 */
export function createChatService({ repo, outbox, workspaces, transaction }: ChatServiceDeps) {
  function requireThread(ownerId: string, workspaceId: string, threadId: string): ThreadRow {
    workspaces.requireOwned(ownerId, workspaceId);
    const thread = repo.getThread(ownerId, workspaceId, threadId);
    if (!thread) throw notFound(`thread '${threadId}' not found`);
    return thread;
  }

  return {
    list(ownerId: string, workspaceId: string): Thread[] {
      workspaces.requireOwned(ownerId, workspaceId);
      return repo.listThreads(ownerId, workspaceId).map(toThread);
    },

    create(ownerId: string, workspaceId: string, body: typeof CreateThreadBody.static) {
      workspaces.requireOwned(ownerId, workspaceId);
      const now = new Date().toISOString();
      const title = body.title?.trim() ? body.title : DEFAULT_THREAD_TITLE;
      const row: ThreadRow = {
        ownerId, workspaceId, id: newId("thr"), title, metadata: body.metadata ?? {}, messageCount: 0, lastMessageId: null, createdAt: now, updatedAt: now,
      };
      transaction(() => {
        repo.insertThread(row);
        outbox.enqueue({ ownerId, kind: "message", sourceId: row.id }, "insert");
      });
      return { id: row.id, title: row.title, createdAt: row.createdAt };
    },

    /** Sets the title and/or replaces the metadata. */
    patch(ownerId: string, workspaceId: string, threadId: string, body: typeof PatchThreadBody.static): void {
      if (body.title === undefined && body.metadata === undefined) throw badRequest("title: title or metadata is required");
      if (body.title !== undefined && !body.title.trim()) throw badRequest("title: must not be blank");
      const thread = requireThread(ownerId, workspaceId, threadId);
      repo.updateThread(ownerId, thread.id, body.title ?? thread.title, body.metadata ?? thread.metadata, new Date().toISOString());
    },

    listMessages(ownerId: string, workspaceId: string, threadId: string): Message[] {
      requireThread(ownerId, workspaceId, threadId);
      return repo.listMessages(ownerId, threadId).map(toMessage);
    },

    /**
     * Appends a message under `parentId` (default: the thread's latest message). The
     * insert, the count bump and the outbox row commit together.
     */
    append(ownerId: string, workspaceId: string, threadId: string, body: typeof AppendMessageBody.static) {
      const role = body.role;
      if (role !== "user" && role !== "assistant") throw badRequest("role: must be 'user' or 'assistant'");
      if (!body.content.trim()) throw badRequest("content: must not be blank");
      const size = Buffer.byteLength(body.content, "utf8");
      if (size > MAX_MESSAGE_BYTES) throw payloadTooLarge(`content: is ${size} bytes; the limit is ${MAX_MESSAGE_BYTES} bytes (200 KB)`);
      requireThread(ownerId, workspaceId, threadId);
      return transaction(() => {
        // Re-read inside the write lock: the latest message may have changed meanwhile.
        const thread = repo.getThread(ownerId, workspaceId, threadId)!;
        if (body.parentId !== undefined && !repo.hasMessage(ownerId, threadId, body.parentId)) {
          throw badRequest(`parentId: no message '${body.parentId}' in this thread`);
        }
        const row: MessageRow = {
          ownerId, threadId, id: newId("msg"), parentId: body.parentId ?? thread.lastMessageId, role, content: body.content,
          createdAt: new Date().toISOString(),
        };
        repo.appendMessage(row);
        outbox.enqueue({ ownerId, kind: "message", sourceId: threadId }, "sync");
        return { id: row.id, role: row.role, parentId: row.parentId, createdAt: row.createdAt };
      });
    },
  };
}
export type ChatService = ReturnType<typeof createChatService>;
