import type { Executor } from "../db/store";
import { groupByOwner, sourceKey, type SearchItem, type SearchSource, type SourceRef } from "../search/types";
import type { ChatRepository } from "./repository";

/**
 * Feeds chat messages to the search index: sourceId = thread id, itemId = message id,
 * sessionId = thread id (so `session_id` filters one thread), documentType `chat`, and
 * the neighbouring messages (two before, one after, in creation order) as lower-weighted
 * context, as for session memories.
 */
export function messageSearchSource(repo: ChatRepository): SearchSource {
  return {
    kind: "message",
    async load(tx: Executor, refs: SourceRef[]) {
      const out = new Map<string, SearchItem[]>();
      for (const [ownerId, ids] of groupByOwner(refs)) {
        for (const thread of (await repo.getThreads(tx, ownerId, ids)).values()) {
          const ref = { ownerId, kind: "message" as const, sourceId: thread.id };
          const messages = await repo.listMessages(tx, ownerId, thread.id);
          out.set(sourceKey(ref), messages.map((message, i) => ({
            ...ref, itemId: message.id, workspaceId: thread.workspaceId, sessionId: thread.id, documentType: "chat",
            metadata: { role: message.role }, createdAtMs: Date.parse(message.createdAt), text: message.content,
            // The thread is a conversation: neighbouring messages are context, as for session memories.
            contextBefore: [messages[i - 2]?.content, messages[i - 1]?.content].filter(Boolean).join("\n"),
            contextAfter: messages[i + 1]?.content ?? "",
          })));
        }
      }
      return out;
    },
    async *listAll(tx: Executor) {
      for await (const key of repo.allThreadKeys(tx)) yield { ownerId: key.ownerId, kind: "message" as const, sourceId: key.id };
    },
  };
}
