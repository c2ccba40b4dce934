import { all, chunks, first, ownedKeysBySeq, list, run, sql, type Executor } from "../db/store";

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

/** Chat threads and messages in the store of record; every query is scoped by owner. */
export function createChatRepository() {
  return {
    async insertThread(tx: Executor, row: ThreadRow): Promise<void> {
      await run(
        tx,
        sql`INSERT INTO chat_threads (owner_id, workspace_id, id, title, metadata, created_at, updated_at)
            VALUES (${row.ownerId}, ${row.workspaceId}, ${row.id}, ${row.title}, ${JSON.stringify(row.metadata)}, ${row.createdAt}, ${row.updatedAt})`,
      );
    },
    async getThread(tx: Executor, ownerId: string, workspaceId: string, id: string): Promise<ThreadRow | null> {
      const r = await first<StoredThread>(tx, sql`SELECT * FROM chat_threads WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} AND id = ${id}`);
      return r ? toThread(r) : null;
    },
    /**
     * Reads a thread while taking its row's write lock until the transaction ends (a
     * no-op UPDATE: portable, unlike SELECT … FOR UPDATE), so concurrent appends see
     * each other's latest message. Call in a transaction; null when there is no such thread.
     */
    async lockThread(tx: Executor, ownerId: string, workspaceId: string, id: string): Promise<ThreadRow | null> {
      const r = await first<StoredThread>(
        tx,
        sql`UPDATE chat_threads SET updated_at = updated_at WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} AND id = ${id} RETURNING *`,
      );
      return r ? toThread(r) : null;
    },
    async listThreads(tx: Executor, ownerId: string, workspaceId: string): Promise<ThreadRow[]> {
      return (await all<StoredThread>(tx, sql`SELECT * FROM chat_threads WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} ORDER BY seq`)).map(toThread);
    },
    /** Sets what is given; the rest keeps its stored value (no read-modify-write, so concurrent patches of different fields both stick). */
    async updateThread(tx: Executor, ownerId: string, id: string, patch: { title?: string; metadata?: Record<string, unknown> }, now: string): Promise<void> {
      const metadata = patch.metadata === undefined ? null : JSON.stringify(patch.metadata);
      await run(
        tx,
        sql`UPDATE chat_threads SET title = COALESCE(${patch.title ?? null}, title), metadata = COALESCE(${metadata}, metadata), updated_at = ${now}
            WHERE owner_id = ${ownerId} AND id = ${id}`,
      );
    },
    /** Inserts a message and bumps its thread's count and latest message. Call in a transaction. */
    async appendMessage(tx: Executor, row: MessageRow): Promise<void> {
      await run(
        tx,
        sql`INSERT INTO chat_messages (owner_id, thread_id, id, parent_id, role, content, created_at)
            VALUES (${row.ownerId}, ${row.threadId}, ${row.id}, ${row.parentId}, ${row.role}, ${row.content}, ${row.createdAt})`,
      );
      // The count is bumped in SQL, never read-modify-written, so no append can be lost.
      await run(
        tx,
        sql`UPDATE chat_threads SET message_count = message_count + 1, last_message_id = ${row.id}, updated_at = ${row.createdAt}
            WHERE owner_id = ${row.ownerId} AND id = ${row.threadId}`,
      );
    },
    async hasMessage(tx: Executor, ownerId: string, threadId: string, messageId: string): Promise<boolean> {
      return (await first(tx, sql`SELECT 1 AS one FROM chat_messages WHERE owner_id = ${ownerId} AND thread_id = ${threadId} AND id = ${messageId}`)) !== null;
    },
    async listMessages(tx: Executor, ownerId: string, threadId: string): Promise<MessageRow[]> {
      return (await all<StoredMessage>(tx, sql`SELECT * FROM chat_messages WHERE owner_id = ${ownerId} AND thread_id = ${threadId} ORDER BY seq`)).map(toMessage);
    },
    /** Threads by id (any workspace of the owner), for search sources and query titles. */
    async getThreads(tx: Executor, ownerId: string, ids: string[]): Promise<Map<string, ThreadRow>> {
      const out = new Map<string, ThreadRow>();
      for (const chunk of chunks(ids)) {
        for (const r of await all<StoredThread>(tx, sql`SELECT * FROM chat_threads WHERE owner_id = ${ownerId} AND id IN ${list(chunk)}`)) {
          out.set(r.id, toThread(r));
        }
      }
      return out;
    },
    /** Every (owner, thread id) for an index rebuild, in pages (no long-lived cursor or transaction). */
    allThreadKeys: (tx: Executor): AsyncIterable<{ ownerId: string; id: string }> => ownedKeysBySeq(tx, "chat_threads"),
  };
}
export type ChatRepository = ReturnType<typeof createChatRepository>;
