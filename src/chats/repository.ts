import type { Database } from "bun:sqlite";
import { selectOwnedByIds } from "../db/select-in";

export interface ThreadRow {
  ownerId: string;
  workspaceId: string;
  id: string;
  title: string;
  metadata: Record<string, unknown>;
  messageCount: number;
  lastMessageId: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface MessageRow {
  ownerId: string;
  threadId: string;
  id: string;
  parentId: string | null;
  role: "user" | "assistant";
  content: string;
  createdAt: string;
}

type StoredThread = {
  owner_id: string; workspace_id: string; id: string; title: string; metadata: string; message_count: number;
  last_message_id: string | null; created_at: string; updated_at: string;
};
const toThread = (r: StoredThread): ThreadRow => ({
  ownerId: r.owner_id, workspaceId: r.workspace_id, id: r.id, title: r.title, metadata: JSON.parse(r.metadata),
  messageCount: r.message_count, lastMessageId: r.last_message_id, createdAt: r.created_at, updatedAt: r.updated_at,
});
type StoredMessage = { owner_id: string; thread_id: string; id: string; parent_id: string | null; role: "user" | "assistant"; content: string; created_at: string };
const toMessage = (r: StoredMessage): MessageRow => ({
  ownerId: r.owner_id, threadId: r.thread_id, id: r.id, parentId: r.parent_id, role: r.role, content: r.content, createdAt: r.created_at,
});

/** Chat threads and messages in SQLite; every query is scoped by owner. */
export function createChatRepository(db: Database) {
  const insertThread = db.query(
    "INSERT INTO chat_threads (owner_id, workspace_id, id, title, metadata, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
  );
  const getThread = db.query<StoredThread, [string, string, string]>("SELECT * FROM chat_threads WHERE owner_id = ? AND workspace_id = ? AND id = ?");
  const listThreads = db.query<StoredThread, [string, string]>("SELECT * FROM chat_threads WHERE owner_id = ? AND workspace_id = ? ORDER BY seq");
  const updateThread = db.query("UPDATE chat_threads SET title = ?, metadata = ?, updated_at = ? WHERE owner_id = ? AND id = ?");
  const insertMessage = db.query(
    "INSERT INTO chat_messages (owner_id, thread_id, id, parent_id, role, content, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
  );
  // The count is bumped in SQL, never read-modify-written, so no append can be lost.
  const bumpThread = db.query(
    "UPDATE chat_threads SET message_count = message_count + 1, last_message_id = ?, updated_at = ? WHERE owner_id = ? AND id = ?",
  );
  const messageIn = db.query<{ one: number }, [string, string, string]>(
    "SELECT 1 AS one FROM chat_messages WHERE owner_id = ? AND thread_id = ? AND id = ?",
  );
  const listMessages = db.query<StoredMessage, [string, string]>("SELECT * FROM chat_messages WHERE owner_id = ? AND thread_id = ? ORDER BY seq");
  return {
    insertThread(row: ThreadRow): void {
      insertThread.run(row.ownerId, row.workspaceId, row.id, row.title, JSON.stringify(row.metadata), row.createdAt, row.updatedAt);
    },
    getThread(ownerId: string, workspaceId: string, id: string): ThreadRow | null {
      const r = getThread.get(ownerId, workspaceId, id);
      return r ? toThread(r) : null;
    },
    listThreads(ownerId: string, workspaceId: string): ThreadRow[] {
      return listThreads.all(ownerId, workspaceId).map(toThread);
    },
    updateThread(ownerId: string, id: string, title: string, metadata: Record<string, unknown>, now: string): void {
      updateThread.run(title, JSON.stringify(metadata), now, ownerId, id);
    },
    /** Inserts a message and bumps its thread's count and latest message. Call in a transaction. */
    appendMessage(row: MessageRow): void {
      insertMessage.run(row.ownerId, row.threadId, row.id, row.parentId, row.role, row.content, row.createdAt);
      bumpThread.run(row.id, row.createdAt, row.ownerId, row.threadId);
    },
    hasMessage(ownerId: string, threadId: string, messageId: string): boolean {
      return messageIn.get(ownerId, threadId, messageId) !== null;
    },
    listMessages(ownerId: string, threadId: string): MessageRow[] {
      return listMessages.all(ownerId, threadId).map(toMessage);
    },
    /** Threads by id (any workspace of the owner), for search sources and query titles. */
    getThreads(ownerId: string, ids: string[]): Map<string, ThreadRow> {
      return new Map(selectOwnedByIds<StoredThread>(db, "chat_threads", "id", ownerId, ids).map((r) => [r.id, toThread(r)]));
    },
    *allThreadKeys(): Iterable<{ ownerId: string; id: string }> {
      for (const r of db.query<{ owner_id: string; id: string }, []>("SELECT owner_id, id FROM chat_threads ORDER BY seq").iterate()) {
        yield { ownerId: r.owner_id, id: r.id };
      }
    },
  };
}
export type ChatRepository = ReturnType<typeof createChatRepository>;
