import type { Executor } from "../db/store";
import { groupByOwner, sourceKey, type SearchItem, type SearchSource, type SourceRef } from "../search";
import type { ChatRepository } from "./repository";

/**
 * Feeds chat messages to the search index, one source per message (sourceId = itemId =
 * message id), as memories are: an append then writes the new message and re-syncs the
 * one before it (whose following context changed), never the whole thread.
 * sessionId = thread id (so `session_id` filters one thread), documentType `chat`, and
 * the neighbouring messages (two before, one after, in creation order) as lower-weighted
 * context, as for session memories.
 */
export function messageSearchSource(repo: ChatRepository): SearchSource<undefined, "message"> {
  return {
    kind: "message",
    async load(tx: Executor, refs: SourceRef[], { context = true } = {}) {
      const out = new Map<string, SearchItem[]>();
      for (const [ownerId, ids] of groupByOwner(refs)) {
        const messages = await repo.getMessages(tx, ownerId, ids);
        const threads = await repo.getThreads(tx, ownerId, [...new Set([...messages.values()].map((m) => m.threadId))]);
        for (const message of messages.values()) {
          const thread = threads.get(message.threadId);
          // An encrypted message is never indexed: the server holds no plaintext of it.
          if (!thread || message.encryptedContent) continue;
          const ref = { ownerId, kind: "message" as const, sourceId: message.id };
          const { before, after } = context ? await repo.neighbours(tx, message) : { before: [], after: null };
          out.set(sourceKey(ref), [
            {
              ...ref,
              itemId: message.id,
              workspaceId: thread.workspaceId,
              sessionId: thread.id,
              documentType: "chat",
              metadata: { role: message.role },
              createdAtMs: Date.parse(message.createdAt),
              text: message.content,
              // The thread is a conversation: neighbouring messages are context, as for session memories.
              contextBefore: before.filter(Boolean).join("\n"),
              contextAfter: after ?? "",
            },
          ]);
        }
      }
      return out;
    },
    async *listAll(tx: Executor) {
      for await (const key of repo.allMessageKeys(tx))
        yield { ownerId: key.ownerId, kind: "message" as const, sourceId: key.id };
    },
  };
}
