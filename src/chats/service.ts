import { encryptString } from "../crypto/aes-gcm";
import { bindingFor } from "../crypto/binding";
import { parseClientKey } from "../crypto/client-key";
import type { SealTags } from "../crypto/seal-tags";
import type { Executor, Store } from "../db/store";
import { oneOf } from "../shared/aliases";
import { badRequest, notFound, payloadTooLarge } from "../shared/app-error";
import type { Cursors } from "../shared/cursors";
import { newId } from "../lib/ids";
import { pager, seqAfter, type Page, type PageRequest } from "../shared/pagination";
import type { Outbox } from "../search";
import type { WorkspaceService } from "../workspaces/service";
import {
  DEFAULT_THREAD_TITLE,
  MAX_MESSAGE_BYTES,
  MAX_THREAD_METADATA_BYTES,
  type AppendMessageBody,
  type CreateThreadBody,
  type Message,
  type PatchThreadBody,
  type Thread,
} from "./model";
import type { ChatRepository, MessageRow, ThreadRow } from "./repository";

/** What another domain may read of chats in its own reads: threads and messages by id or in pages (the documents query's hits, the derived index's rebuilds). */
export type ChatReads = Pick<ChatRepository, "getThreads" | "getMessages" | "listThreadsPage" | "messageKeysPage">;
import { unindexMessages } from "./workspace-purge";

export interface ChatServiceDeps {
  repo: ChatRepository;
  outbox: Outbox;
  workspaces: WorkspaceService;
  store: Store;
  cursors: Cursors;
  /**
   * Deletes the extraction jobs of a thread (formation owns them), in the transaction that
   * deletes the thread; how many went.
   */
  purgeThreadJobs?: (tx: Executor, ownerId: string, workspaceId: string, threadId: string) => Promise<number>;
  /** The seal tag of an encrypted message, written with it (crypto/seal-tags.ts). */
  sealTags: SealTags;
}

const toThread = (row: ThreadRow): Thread => ({
  id: row.id,
  title: row.title,
  messageCount: row.messageCount,
  metadata: row.metadata,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});
const toMessage = (row: MessageRow): Message =>
  row.encryptedContent
    ? {
        id: row.id,
        role: row.role,
        encryptedContent: row.encryptedContent,
        parentId: row.parentId,
        createdAt: row.createdAt,
      }
    : { id: row.id, role: row.role, content: row.content, parentId: row.parentId, createdAt: row.createdAt };

/** Thread metadata is returned by every listing: a 413 naming the field past 64 KB. */
function checkMetadata(metadata: Record<string, unknown> | undefined): void {
  if (metadata === undefined) return;
  const size = Buffer.byteLength(JSON.stringify(metadata), "utf8");
  if (size > MAX_THREAD_METADATA_BYTES) {
    throw payloadTooLarge(`metadata: is ${size} bytes; the limit is ${MAX_THREAD_METADATA_BYTES} bytes (64 KB)`);
  }
}

/**
 * Native chat threads. They are not documents (no blocks, no markdown), but each
 * message is a search source of its own, so its text is findable and an append costs
 * the index two rows (the new message, and the one before it whose context changed).
 */
export function createChatService({
  repo,
  outbox,
  workspaces,
  store,
  cursors,
  purgeThreadJobs,
  sealTags,
}: ChatServiceDeps) {
  async function requireThread(ownerId: string, workspaceId: string, threadId: string): Promise<ThreadRow> {
    await workspaces.requireOwned(ownerId, workspaceId);
    const thread = await repo.getThread(store.db, ownerId, workspaceId, threadId);
    if (!thread) throw notFound(`thread '${threadId}' not found`);
    return thread;
  }

  return {
    /** A page of the workspace's threads, oldest first. */
    async list(ownerId: string, workspaceId: string, request: PageRequest): Promise<Page<Thread>> {
      await workspaces.requireOwned(ownerId, workspaceId);
      const paging = pager(cursors, ownerId, `threads:${workspaceId}`);
      const { limit, after } = paging.start(request);
      const page = paging.page(
        await repo.listThreadsPage(store.db, ownerId, workspaceId, seqAfter(after), limit + 1),
        limit,
        (row) => String(row.seq),
      );
      return { ...page, items: page.items.map(toThread) };
    },

    async create(ownerId: string, workspaceId: string, body: typeof CreateThreadBody.static) {
      checkMetadata(body.metadata);
      await workspaces.requireOwned(ownerId, workspaceId);
      const now = new Date().toISOString();
      const title = body.title?.trim() ? body.title : DEFAULT_THREAD_TITLE;
      const row: ThreadRow = {
        ownerId,
        workspaceId,
        id: newId("thr"),
        title,
        metadata: body.metadata ?? {},
        messageCount: 0,
        lastMessageId: null,
        createdAt: now,
        updatedAt: now,
      };
      // A thread has nothing to index until its first message.
      await repo.insertThread(store.db, row);
      return { id: row.id, title: row.title, createdAt: row.createdAt };
    },

    /** Sets the title and/or replaces the metadata. */
    async patch(
      ownerId: string,
      workspaceId: string,
      threadId: string,
      body: typeof PatchThreadBody.static,
    ): Promise<void> {
      if (body.title === undefined && body.metadata === undefined)
        throw badRequest("title: title or metadata is required");
      if (body.title !== undefined && !body.title.trim()) throw badRequest("title: must not be blank");
      checkMetadata(body.metadata);
      const thread = await requireThread(ownerId, workspaceId, threadId);
      await repo.updateThread(
        store.db,
        ownerId,
        thread.id,
        { title: body.title, metadata: body.metadata },
        new Date().toISOString(),
      );
    },

    /**
     * Deletes a thread with its messages and extraction jobs, and queues the removal of the
     * messages' index rows, in one transaction; a search finds none of them from then on.
     */
    async remove(ownerId: string, workspaceId: string, threadId: string) {
      await workspaces.requireOwned(ownerId, workspaceId);
      const removed = await store.transaction(async (tx) => {
        const messageIds = await repo.deleteThread(tx, ownerId, workspaceId, threadId);
        if (!messageIds) return null;
        await unindexMessages(tx, outbox, ownerId, messageIds);
        const jobs = purgeThreadJobs ? await purgeThreadJobs(tx, ownerId, workspaceId, threadId) : 0;
        return { messages: messageIds.length, jobs };
      });
      if (!removed) throw notFound(`thread '${threadId}' not found`);
      return { id: threadId, deleted: true as const, removed };
    },

    /** A page of a thread's messages, in creation order. */
    async listMessages(
      ownerId: string,
      workspaceId: string,
      threadId: string,
      request: PageRequest,
    ): Promise<Page<Message>> {
      await requireThread(ownerId, workspaceId, threadId);
      const paging = pager(cursors, ownerId, `messages:${threadId}`);
      const { limit, after } = paging.start(request);
      const page = paging.page(
        await repo.listMessagesPage(store.db, ownerId, threadId, seqAfter(after), limit + 1),
        limit,
        (row) => String(row.seq),
      );
      return { ...page, items: page.items.map(toMessage) };
    },

    /**
     * Appends a message under `parentId` (default: the thread's latest message). The
     * insert, the count bump and the outbox rows commit together: the new message, and
     * the thread's previous latest message, whose context now ends with the new one.
     */
    async append(
      ownerId: string,
      workspaceId: string,
      threadId: string,
      body: typeof AppendMessageBody.static,
      encryptionKey?: Buffer,
    ) {
      const role = body.role;
      if (role !== "user" && role !== "assistant") throw badRequest("role: must be 'user' or 'assistant'");
      if (!body.content.trim()) throw badRequest("content: must not be blank");
      const size = Buffer.byteLength(body.content, "utf8");
      if (size > MAX_MESSAGE_BYTES)
        throw payloadTooLarge(`content: is ${size} bytes; the limit is ${MAX_MESSAGE_BYTES} bytes (200 KB)`);
      await requireThread(ownerId, workspaceId, threadId);
      const bodyKey = oneOf<string>(body, ["client_key", "clientKey"]);
      const key =
        bodyKey !== undefined
          ? parseClientKey(bodyKey, body.client_key !== undefined ? "client_key" : "clientKey")
          : encryptionKey;
      // With a key only the ciphertext is stored (content '' at rest), tagged with this
      // message's place (crypto/seal-tags.ts), and nothing is indexed.
      const id = newId("msg");
      const stored = key
        ? { content: "", encryptedContent: encryptString(body.content, key) }
        : { content: body.content, encryptedContent: null };
      return store.transaction(async (tx) => {
        // Re-read under the thread's row lock: the latest message may have changed meanwhile.
        const thread = await repo.lockThread(tx, ownerId, workspaceId, threadId);
        if (!thread) throw notFound(`thread '${threadId}' not found`);
        if (body.parentId !== undefined && !(await repo.hasMessage(tx, ownerId, threadId, body.parentId))) {
          throw badRequest(`parentId: no message '${body.parentId}' in this thread`);
        }
        const row: MessageRow = {
          ownerId,
          threadId,
          id,
          parentId: body.parentId ?? thread.lastMessageId,
          role,
          ...stored,
          createdAt: new Date().toISOString(),
        };
        await repo.appendMessage(tx, row);
        if (row.encryptedContent)
          await sealTags.stamp(tx, bindingFor(ownerId, "chat-message", id)("encryptedContent"), row.encryptedContent);
        await outbox.enqueue(tx, { ownerId, kind: "message", sourceId: row.id }, "insert");
        if (thread.lastMessageId)
          await outbox.enqueue(tx, { ownerId, kind: "message", sourceId: thread.lastMessageId }, "sync");
        return { id: row.id, role: row.role, parentId: row.parentId, createdAt: row.createdAt };
      });
    },
  };
}
export type ChatService = ReturnType<typeof createChatService>;
