import { insertOf, type OwnedTable, type StoredColumns } from "../db/owned-tables";
import { all, first, ownedKeysBySeq, ownedRowsByIds, run, sql, type Executor, type Sql } from "../db/store";

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
  /** '' when the message is held encrypted. */
  content: string;
  /** `iv:tag:ct` of the content when written with a client key (then nothing else holds it). */
  encryptedContent?: string | null;
  createdAt: string;
}

/** The thread table's columns with the row field each holds: what an export carries (`THREAD_TABLE`) and the insert writes. */
const THREAD_COLUMNS = {
  owner_id: "ownerId",
  workspace_id: "workspaceId",
  id: "id",
  title: "title",
  metadata: "metadata",
  message_count: "messageCount",
  last_message_id: "lastMessageId",
  created_at: "createdAt",
  updated_at: "updatedAt",
} as const satisfies StoredColumns<ThreadRow>;
const THREAD_JSON = ["metadata"];
/** A new thread holds no messages yet: its count and latest message keep their stored defaults, and appends keep them. */
const NEW_THREAD_COLUMNS = Object.keys(THREAD_COLUMNS).filter((c) => c !== "message_count" && c !== "last_message_id");

/** The message table's columns with the row field each holds: what the insert writes and an export carries (`MESSAGE_TABLE`). */
const MESSAGE_COLUMNS = {
  owner_id: "ownerId",
  thread_id: "threadId",
  id: "id",
  parent_id: "parentId",
  role: "role",
  content: "content",
  encrypted_content: "encryptedContent",
  created_at: "createdAt",
} as const satisfies StoredColumns<MessageRow>;

type StoredThread = {
  seq: number;
  owner_id: string;
  workspace_id: string;
  id: string;
  title: string;
  metadata: string;
  message_count: number;
  last_message_id: string | null;
  created_at: string;
  updated_at: string;
};
const toThread = (r: StoredThread): ThreadRow => ({
  ownerId: r.owner_id,
  workspaceId: r.workspace_id,
  id: r.id,
  title: r.title,
  metadata: JSON.parse(r.metadata),
  messageCount: r.message_count,
  lastMessageId: r.last_message_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});
type StoredMessage = {
  seq: number;
  owner_id: string;
  thread_id: string;
  id: string;
  parent_id: string | null;
  role: "user" | "assistant";
  content: string;
  created_at: string;
  encrypted_content?: string | null;
};
/** A message with its place in the thread's creation order (neighbours and pages go by it). */
export type PlacedMessage = MessageRow & { seq: number };
const toMessage = (r: StoredMessage): PlacedMessage => ({
  seq: r.seq,
  ownerId: r.owner_id,
  threadId: r.thread_id,
  id: r.id,
  parentId: r.parent_id,
  role: r.role,
  content: r.content,
  createdAt: r.created_at,
  encryptedContent: r.encrypted_content ?? null,
});

/** Chat threads and messages in the store of record; every query is scoped by owner. */
export function createChatRepository() {
  return {
    async insertThread(tx: Executor, row: ThreadRow): Promise<void> {
      await run(
        tx,
        sql`INSERT INTO chat_threads ${insertOf(THREAD_COLUMNS, row, { json: THREAD_JSON, only: NEW_THREAD_COLUMNS })}`,
      );
    },
    async getThread(tx: Executor, ownerId: string, workspaceId: string, id: string): Promise<ThreadRow | null> {
      const r = await first<StoredThread>(
        tx,
        sql`SELECT * FROM chat_threads WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} AND id = ${id}`,
      );
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
    /** Up to `limit` threads of a workspace created after the one of sequence `afterSeq`, oldest first. */
    async listThreadsPage(
      tx: Executor,
      ownerId: string,
      workspaceId: string,
      afterSeq: number,
      limit: number,
    ): Promise<Array<ThreadRow & { seq: number }>> {
      const rows = await all<StoredThread>(
        tx,
        sql`SELECT * FROM chat_threads WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} AND seq > ${afterSeq} ORDER BY seq LIMIT ${limit}`,
      );
      return rows.map((r) => ({ ...toThread(r), seq: r.seq }));
    },
    /** Sets what is given; the rest keeps its stored value (no read-modify-write, so concurrent patches of different fields both stick). */
    async updateThread(
      tx: Executor,
      ownerId: string,
      id: string,
      patch: { title?: string; metadata?: Record<string, unknown> },
      now: string,
    ): Promise<void> {
      const metadata = patch.metadata === undefined ? null : JSON.stringify(patch.metadata);
      await run(
        tx,
        sql`UPDATE chat_threads SET title = COALESCE(${patch.title ?? null}, title), metadata = COALESCE(${metadata}, metadata), updated_at = ${now}
            WHERE owner_id = ${ownerId} AND id = ${id}`,
      );
    },
    /** Inserts a message and bumps its thread's count and latest message. Call in a transaction. */
    async appendMessage(tx: Executor, row: MessageRow): Promise<void> {
      await run(tx, sql`INSERT INTO chat_messages ${insertOf(MESSAGE_COLUMNS, row)}`);
      // The count is bumped in SQL, never read-modify-written, so no append can be lost.
      await run(
        tx,
        sql`UPDATE chat_threads SET message_count = message_count + 1, last_message_id = ${row.id}, updated_at = ${row.createdAt}
            WHERE owner_id = ${row.ownerId} AND id = ${row.threadId}`,
      );
    },
    async hasMessage(tx: Executor, ownerId: string, threadId: string, messageId: string): Promise<boolean> {
      return (
        (await first(
          tx,
          sql`SELECT 1 AS one FROM chat_messages WHERE owner_id = ${ownerId} AND thread_id = ${threadId} AND id = ${messageId}`,
        )) !== null
      );
    },
    /** Up to `limit` messages of a thread after the one of sequence `afterSeq`, in creation order. */
    async listMessagesPage(
      tx: Executor,
      ownerId: string,
      threadId: string,
      afterSeq: number,
      limit: number,
    ): Promise<PlacedMessage[]> {
      const rows = await all<StoredMessage>(
        tx,
        sql`SELECT * FROM chat_messages WHERE owner_id = ${ownerId} AND thread_id = ${threadId} AND seq > ${afterSeq} ORDER BY seq LIMIT ${limit}`,
      );
      return rows.map(toMessage);
    },
    /** Up to `limit` (seq, id) of a thread's messages after `afterSeq`, in creation order (reindex batches). */
    async messageKeysPage(
      tx: Executor,
      ownerId: string,
      threadId: string,
      afterSeq: number,
      limit: number,
    ): Promise<Array<{ seq: number; id: string }>> {
      return all<{ seq: number; id: string }>(
        tx,
        sql`SELECT seq, id FROM chat_messages WHERE owner_id = ${ownerId} AND thread_id = ${threadId} AND seq > ${afterSeq} ORDER BY seq LIMIT ${limit}`,
      );
    },
    /** Messages by id, any thread of the owner (search sources, query hits). */
    async getMessages(tx: Executor, ownerId: string, ids: string[]): Promise<Map<string, PlacedMessage>> {
      return new Map(
        (await ownedRowsByIds<StoredMessage>(tx, "chat_messages", ownerId, ids)).map((r) => [r.id, toMessage(r)]),
      );
    },
    /** The contents of the two messages before `message` and the one after it, in its thread's creation order. */
    async neighbours(tx: Executor, message: PlacedMessage): Promise<{ before: string[]; after: string | null }> {
      const before = await all<{ content: string }>(
        tx,
        sql`SELECT content FROM chat_messages WHERE owner_id = ${message.ownerId} AND thread_id = ${message.threadId} AND seq < ${message.seq}
            ORDER BY seq DESC LIMIT 2`,
      );
      const after = await first<{ content: string }>(
        tx,
        sql`SELECT content FROM chat_messages WHERE owner_id = ${message.ownerId} AND thread_id = ${message.threadId} AND seq > ${message.seq}
            ORDER BY seq LIMIT 1`,
      );
      return { before: before.map((r) => r.content).reverse(), after: after?.content ?? null };
    },
    /** Threads by id (any workspace of the owner), for search sources and query titles. */
    async getThreads(tx: Executor, ownerId: string, ids: string[]): Promise<Map<string, ThreadRow>> {
      return new Map(
        (await ownedRowsByIds<StoredThread>(tx, "chat_threads", ownerId, ids)).map((r) => [r.id, toThread(r)]),
      );
    },
    /** Deletes a thread and its messages; the ids of the messages that went, or null when there was no such thread. */
    async deleteThread(tx: Executor, ownerId: string, workspaceId: string, id: string): Promise<string[] | null> {
      const gone = await all<{ id: string }>(
        tx,
        sql`DELETE FROM chat_threads WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId} AND id = ${id} RETURNING id`,
      );
      if (!gone.length) return null;
      return (
        await all<{ id: string }>(
          tx,
          sql`DELETE FROM chat_messages WHERE owner_id = ${ownerId} AND thread_id = ${id} RETURNING id`,
        )
      ).map((r) => r.id);
    },
    /** Deletes every thread of a workspace and their messages; how many threads went, and the ids of the messages. */
    async deleteWorkspace(
      tx: Executor,
      ownerId: string,
      workspaceId: string,
    ): Promise<{ threads: number; messageIds: string[] }> {
      const messages = await all<{ id: string }>(
        tx,
        sql`DELETE FROM chat_messages WHERE owner_id = ${ownerId}
              AND thread_id IN (SELECT id FROM chat_threads WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId}) RETURNING id`,
      );
      const threads = await run(
        tx,
        sql`DELETE FROM chat_threads WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId}`,
      );
      return { threads, messageIds: messages.map((r) => r.id) };
    },
    /** How many threads and messages a workspace holds. */
    async countWorkspace(
      tx: Executor,
      ownerId: string,
      workspaceId: string,
    ): Promise<{ threads: number; messages: number }> {
      const r = await first<{ threads: number; messages: number | null }>(
        tx,
        sql`SELECT COUNT(*) AS threads, SUM(message_count) AS messages FROM chat_threads WHERE owner_id = ${ownerId} AND workspace_id = ${workspaceId}`,
      );
      return { threads: Number(r?.threads ?? 0), messages: Number(r?.messages ?? 0) };
    },
    /** Every (owner, message id) for an index rebuild, in pages (no long-lived cursor or transaction). */
    allMessageKeys: (tx: Executor): AsyncIterable<{ ownerId: string; id: string }> =>
      ownedKeysBySeq(tx, "chat_messages"),
  };
}
export type ChatRepository = ReturnType<typeof createChatRepository>;

/**
 * A condition on `column` (a `message` source id): it names a message of a thread of the
 * workspace. A part of another statement, so that the derived index counts a workspace's
 * pending outbox rows in one statement.
 */
export function workspaceMessageSources(column: Sql, ownerId: string, workspaceId: string): Sql {
  return sql`${column} IN (
    SELECT m.id FROM chat_messages m JOIN chat_threads t ON t.owner_id = m.owner_id AND t.id = m.thread_id
    WHERE t.owner_id = ${ownerId} AND t.workspace_id = ${workspaceId})`;
}

/** Chat threads, as a user's export carries them. */
export const THREAD_TABLE: OwnedTable = {
  table: "chat_threads",
  owner: "owner_id",
  columns: Object.keys(THREAD_COLUMNS),
  json: THREAD_JSON,
  orderBy: "seq",
  idColumns: ["id"],
};

/** Chat messages, as a user's export carries them. */
export const MESSAGE_TABLE: OwnedTable = {
  table: "chat_messages",
  owner: "owner_id",
  columns: Object.keys(MESSAGE_COLUMNS),
  // encrypted_content came with the encryption feature: older exports lack it.
  defaults: { encrypted_content: null },
  orderBy: "seq",
  idColumns: ["id"],
};
