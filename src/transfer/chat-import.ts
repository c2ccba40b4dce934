import { createHash } from "node:crypto";
import { open, readFile, stat } from "node:fs/promises";
import { threadWrites } from "../chats";
import type { Executor, Store } from "../db/store";
import { extractionJobQueue } from "../formation";
import { MAX_EXTRACT_MESSAGES } from "../formation/model";
import type { Outbox, SourceRef } from "../search";
import { ensureWorkspace } from "../workspaces";
import {
  CHAT_EXPORT_LIMITS,
  chatExportSource,
  readChatExport,
  type ChatExport,
  type ChatExportSource,
  type ExportedConversation,
} from "./chat-exports";
import { looksLikeZip, readZipMember, ZipError } from "./zip";

/**
 * `mnemo import` of a ChatGPT or Claude export: one chat thread per conversation, in a
 * workspace of the user's (`--workspace`, else one per source: "ChatGPT import", "Claude
 * import"). Thread and message ids derive from the user and the export's own ids, so a re-run
 * finds what it wrote and adds only messages it has not seen. With `extract`, each
 * conversation's messages not yet covered by an extraction job get jobs, capture's own, in the
 * transaction that writes them: the server's worker runs them (admitted against the user's
 * quota, retried, resumed after a restart), and a re-run queues nothing twice.
 */

/** The file is an export of the right kind but cannot be imported (too large, a broken zip): one line. */
export class ChatExportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ImportFormatError";
  }
}

/** Conversations per transaction, and the messages that close one early. */
const BATCH_CONVERSATIONS = 100;
const BATCH_MESSAGES = 2_000;
/** What is looked at to tell a chat export from the other JSON formats before reading it whole. */
const HEAD_BYTES = 64 * 1024;

const hash = (...parts: string[]) => createHash("sha256").update(parts.join("\u001f")).digest("hex").slice(0, 24);

const SOURCE_NAMES: Record<ChatExportSource, string> = { chatgpt: "ChatGPT", claude: "Claude" };
/** The workspace a source's conversations go to when no `--workspace` is given: one per user and source. */
export const chatImportWorkspaceId = (userId: string, source: ChatExportSource) =>
  `ws_${source}_${hash("chat-import", userId, source)}`;
const threadIdOf = (userId: string, source: ChatExportSource, conversationId: string) =>
  `thr_${source}_${hash(userId, source, conversationId)}`;
const messageIdOf = (threadId: string, messageId: string) => `msg_${hash(threadId, messageId)}`;

/**
 * The chat export at `path` (a `conversations.json`, or the zip it came in), read and parsed;
 * null when the file is not one (the other formats are tried).
 */
export async function loadChatExport(path: string, now: string): Promise<ChatExport | null> {
  const head = Buffer.alloc(HEAD_BYTES);
  const file = await open(path, "r");
  const { bytesRead } = await file.read(head, 0, HEAD_BYTES, 0).finally(() => file.close());
  let json: string;
  if (looksLikeZip(head.subarray(0, bytesRead))) {
    const member = await readZipMember(
      path,
      (name) => name === "conversations.json" || name.endsWith("/conversations.json"),
      {
        maxEntries: CHAT_EXPORT_LIMITS.zipEntries,
        maxBytes: CHAT_EXPORT_LIMITS.bytes,
        maxRatio: CHAT_EXPORT_LIMITS.zipRatio,
      },
    ).catch((error) => {
      throw error instanceof ZipError ? new ChatExportError(`${path}: ${error.message}`) : error;
    });
    if (!member)
      throw new ChatExportError(
        `${path}: a zip archive without conversations.json; import ChatGPT's or Claude's data export (the zip or its conversations.json)`,
      );
    json = member.data.toString("utf8");
  } else {
    const start = head.toString("utf8", 0, bytesRead).trimStart();
    if (!start.startsWith("[") || !/"(mapping|chat_messages)"\s*:/.test(start)) return null;
    const { size } = await stat(path);
    if (size > CHAT_EXPORT_LIMITS.bytes)
      throw new ChatExportError(
        `${path}: is ${size} bytes; the limit for a chat export is ${CHAT_EXPORT_LIMITS.bytes}`,
      );
    json = await readFile(path, "utf8");
  }
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    if (!looksLikeZip(head)) return null;
    throw new ChatExportError(`${path}: conversations.json is not JSON (${(error as Error).message})`);
  }
  const source = chatExportSource(value);
  if (!source) {
    if (!looksLikeZip(head)) return null;
    throw new ChatExportError(
      `${path}: conversations.json is neither ChatGPT's export (a list with "mapping") nor Claude's (a list with "chat_messages")`,
    );
  }
  try {
    return readChatExport(value as unknown[], source, now);
  } catch (error) {
    throw new ChatExportError(`${path}: ${(error as Error).message}`);
  }
}

export interface ChatImportOptions {
  userId: string;
  /** The threads' workspace (made when missing); memories extracted go there too (else they are the user's personal ones). */
  workspaceId?: string;
  /** Queue extraction jobs for the conversations' messages. */
  extract?: boolean;
  /** Only the first this many conversations. */
  limit?: number;
  onProgress?: (done: number, total: number) => void;
}

export interface ChatImportReport {
  format: "chatgpt-export" | "claude-export";
  /** Conversations in the export, bad ones included. */
  read: number;
  inserted: number;
  existing: number;
  failed: number;
  problems: Array<{ place: string; message: string }>;
  byType: Record<string, number>;
  queued: number;
  workspaceId: string;
  /** Extraction jobs queued by this run (`extract`). */
  extractionJobs: number;
}

interface Deps {
  store: Store;
  outbox: Outbox;
}

/** Writes the conversations of an export as chat threads (see the module's comment). */
export async function importChatExport(
  deps: Deps,
  exported: ChatExport,
  options: ChatImportOptions,
): Promise<ChatImportReport> {
  const { userId } = options;
  const workspaceId = options.workspaceId ?? chatImportWorkspaceId(userId, exported.source);
  await ensureChatWorkspace(
    deps.store,
    userId,
    workspaceId,
    options.workspaceId ? options.workspaceId : `${SOURCE_NAMES[exported.source]} import`,
  );
  const conversations = exported.conversations.slice(0, options.limit ?? exported.conversations.length);
  const report: ChatImportReport = {
    format: `${exported.source}-export`,
    read: exported.read,
    inserted: 0,
    existing: 0,
    failed: exported.problems.length,
    problems: [...exported.problems],
    byType: {},
    queued: 0,
    workspaceId,
    extractionJobs: 0,
  };
  const count = (type: string, n: number) => {
    if (n) report.byType[type] = (report.byType[type] ?? 0) + n;
  };
  let done = 0;
  for (let start = 0; start < conversations.length; ) {
    let messages = 0;
    let end = start;
    while (end < conversations.length && end - start < BATCH_CONVERSATIONS && messages < BATCH_MESSAGES)
      messages += conversations[end++].messages.length;
    const batch = conversations.slice(start, end);
    // Counted once committed: a transaction that meets a conflict runs again.
    const { outcomes, queued } = await deps.store.transaction(async (tx) => {
      const refs: SourceRef[] = [];
      const outcomes = [];
      for (const conversation of batch) {
        outcomes.push(
          await writeConversation(
            tx,
            exported.source,
            conversation,
            { ...options, workspaceId, memoriesWorkspaceId: options.workspaceId ?? null },
            refs,
          ),
        );
      }
      await deps.outbox.enqueueMany(tx, refs, "insert");
      return { outcomes, queued: refs.length };
    });
    for (const outcome of outcomes) {
      if (outcome.newThread) report.inserted++;
      else report.existing++;
      count("chat_thread", outcome.newThread ? 1 : 0);
      count("chat_message", outcome.newMessages);
      report.extractionJobs += outcome.jobs;
    }
    report.queued += queued;
    done += batch.length;
    start = end;
    options.onProgress?.(done, conversations.length);
  }
  if (!conversations.length) options.onProgress?.(0, 0);
  return report;
}

/** Makes the workspace when missing; refuses one of another user's (workspace ids are unique across users). */
async function ensureChatWorkspace(store: Store, ownerId: string, id: string, name: string): Promise<void> {
  await store.transaction(async (tx) => {
    if ((await ensureWorkspace(tx, { ownerId, id, name })) === "taken")
      throw new ChatExportError(`--workspace: '${id}' belongs to another user`);
  });
}

/**
 * One conversation: its thread (made when new; one imported before stays in the workspace it
 * went to), the messages it does not hold yet appended in order, each answering the one before;
 * with `extract`, jobs for the messages no job covers.
 */
async function writeConversation(
  tx: Executor,
  source: ChatExportSource,
  conversation: ExportedConversation,
  options: ChatImportOptions & { workspaceId: string; memoriesWorkspaceId: string | null },
  refs: SourceRef[],
): Promise<{ newThread: boolean; newMessages: number; jobs: number }> {
  const { userId } = options;
  const threadId = threadIdOf(userId, source, conversation.sourceId);
  const workspaceId =
    (await threadWrites.getThreads(tx, userId, [threadId])).get(threadId)?.workspaceId ?? options.workspaceId;
  // Locked so that a concurrent import of the same export appends after this one, not beside it.
  const newThread = !(await threadWrites.lockThread(tx, userId, workspaceId, threadId));
  if (newThread) {
    await threadWrites.insertThread(tx, {
      ownerId: userId,
      workspaceId,
      id: threadId,
      title: conversation.title,
      metadata: { importedFrom: source, conversationId: conversation.sourceId },
      messageCount: 0,
      lastMessageId: null,
      createdAt: conversation.createdAt,
      updatedAt: conversation.updatedAt,
    });
  }
  const held = new Set<string>();
  if (!newThread) {
    for (let after = 0; ; ) {
      const page = await threadWrites.messageKeysPage(tx, userId, threadId, after, 1_000);
      if (!page.length) break;
      for (const key of page) held.add(key.id);
      after = page.at(-1)!.seq;
    }
  }
  let parentId: string | null = null;
  let newMessages = 0;
  const path: string[] = [];
  const onPath = new Set<string>();
  for (const message of conversation.messages) {
    const id = messageIdOf(threadId, message.sourceId);
    // An export that names one message twice keeps the first.
    if (onPath.has(id)) continue;
    if (!held.has(id)) {
      await threadWrites.appendMessage(tx, {
        ownerId: userId,
        threadId,
        id,
        parentId,
        role: message.role,
        content: message.content,
        encryptedContent: null,
        createdAt: message.createdAt,
      });
      refs.push({ ownerId: userId, kind: "message", sourceId: id });
      held.add(id);
      newMessages++;
    }
    path.push(id);
    onPath.add(id);
    parentId = id;
  }
  let queued = 0;
  if (options.extract && path.length) {
    const covered = await extractionJobQueue.coveredMessageIds(tx, userId, threadId);
    const uncovered = path.filter((id) => !covered.has(id));
    // A job reads at most MAX_EXTRACT_MESSAGES messages: a long conversation gets several.
    for (let i = 0; i < uncovered.length; i += MAX_EXTRACT_MESSAGES) {
      await extractionJobQueue.enqueue(
        tx,
        {
          ownerId: userId,
          workspaceId: options.memoriesWorkspaceId,
          threadWorkspaceId: workspaceId,
          threadId,
          messageIds: uncovered.slice(i, i + MAX_EXTRACT_MESSAGES),
        },
        Date.now(),
      );
      queued++;
    }
  }
  return { newThread, newMessages, jobs: queued };
}
