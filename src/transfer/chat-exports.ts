import { MAX_MESSAGE_BYTES } from "../chats/model";
import { isoTime } from "./formats";

/**
 * Readers of the chat histories people download from ChatGPT (Settings → Data controls →
 * Export data) and Claude (Settings → Privacy → Export data): each a `conversations.json`
 * list, shipped in a zip. Only what a person saw is kept: the user's and the assistant's text,
 * on the branch the conversation last showed; system prompts, hidden context, tool calls and
 * their output, reasoning and attachments are left out. Fields are read at fixed paths, never
 * walked, so a deeply nested export costs nothing beyond parsing it.
 */

export type ChatExportSource = "chatgpt" | "claude";

export interface ExportedMessage {
  /** The export's own id of the message (or its position, when it has none). */
  sourceId: string;
  role: "user" | "assistant";
  content: string;
  createdAt: string;
}

export interface ExportedConversation {
  /** Where it is in the file, for messages: `conversations[3]`. */
  place: string;
  /** The export's own id: the thread's id is derived from it, so a re-run finds the thread. */
  sourceId: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  messages: ExportedMessage[];
}

export interface ChatExport {
  source: ChatExportSource;
  /** Conversations in the file, bad ones included. */
  read: number;
  conversations: ExportedConversation[];
  problems: Array<{ place: string; message: string }>;
}

/** Bounds of a chat export: it is free-form input from a file of any size. */
export const CHAT_EXPORT_LIMITS = {
  /** conversations.json, uncompressed. */
  bytes: 512 * 1024 * 1024,
  conversations: 100_000,
  /** Messages on one conversation's path (a ChatGPT mapping is walked no further). */
  messages: 10_000,
  zipEntries: 200_000,
  /** JSON compresses 5–20-fold; far more is a zip bomb. */
  zipRatio: 200,
} as const;

const MAX_ID_CHARS = 256;
/** A thread title's limit (src/chats/model.ts). */
const MAX_TITLE_CHARS = 500;
const encoder = new TextEncoder();
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const text = (v: unknown): string | null => (typeof v === "string" && v.trim() ? v : null);

/** Which export a parsed `conversations.json` is: a list of objects with `mapping` (ChatGPT) or `chat_messages` (Claude). */
export function chatExportSource(value: unknown): ChatExportSource | null {
  if (!Array.isArray(value)) return null;
  const first = value.find(isObject);
  if (!first) return null;
  if (isObject(first.mapping)) return "chatgpt";
  if (Array.isArray(first.chat_messages)) return "claude";
  return null;
}

/**
 * Text as a chat message may hold it: U+0000 (which PostgreSQL text cannot store) shown as
 * U+FFFD, and cut at the message limit on a character boundary.
 */
export function storableText(value: string, maxBytes = MAX_MESSAGE_BYTES): string {
  const clean = value.replaceAll("\u0000", "\ufffd");
  const bytes = encoder.encode(clean);
  if (bytes.byteLength <= maxBytes) return clean;
  return new TextDecoder().decode(bytes.subarray(0, maxBytes)).replace(/\ufffd$/, "");
}

/** A conversation's title: its own, else the start of its first message. */
function titleOf(own: unknown, messages: ExportedMessage[], fallback: string): string {
  const title = (text(own) ?? messages[0]?.content ?? fallback).replace(/\s+/g, " ").trim();
  return storableText(title.length > MAX_TITLE_CHARS ? `${title.slice(0, MAX_TITLE_CHARS - 1)}…` : title || fallback);
}

/** ChatGPT: the visible branch of the `mapping` tree, from `current_node` up through the parents, oldest first. */
function chatgptPath(conversation: Record<string, unknown>): unknown[] | string {
  const mapping = conversation.mapping as Record<string, unknown>;
  let at = typeof conversation.current_node === "string" ? conversation.current_node : null;
  if (!at || !isObject(mapping[at])) {
    // No current node named: the leaf written last.
    let latest = -Infinity;
    for (const [id, node] of Object.entries(mapping)) {
      if (!isObject(node) || (Array.isArray(node.children) && node.children.length)) continue;
      const time =
        isObject(node.message) && typeof node.message.create_time === "number" ? node.message.create_time : 0;
      if (time >= latest) {
        latest = time;
        at = id;
      }
    }
  }
  const path: unknown[] = [];
  const seen = new Set<string>();
  for (let id = at; id && !seen.has(id); ) {
    const node = mapping[id];
    if (!isObject(node)) break;
    // Far more nodes than messages kept: hidden and tool nodes are on the path too.
    if (seen.size >= 4 * CHAT_EXPORT_LIMITS.messages)
      return `its branch is longer than ${4 * CHAT_EXPORT_LIMITS.messages} nodes`;
    seen.add(id);
    path.push(node.message);
    id = typeof node.parent === "string" ? node.parent : null;
  }
  return path.reverse();
}

/** One ChatGPT message as the conversation showed it, or null for what it did not show. */
function chatgptMessage(message: unknown, index: number, previous: string): ExportedMessage | null {
  if (!isObject(message) || !isObject(message.author) || !isObject(message.content)) return null;
  const role = message.author.role;
  if (role !== "user" && role !== "assistant") return null;
  // A message to a tool (the browser, python, an image model) is not part of the conversation shown.
  if (typeof message.recipient === "string" && message.recipient !== "all") return null;
  if (isObject(message.metadata) && message.metadata.is_visually_hidden_from_conversation === true) return null;
  const kind = message.content.content_type;
  if (kind !== "text" && kind !== "multimodal_text") return null;
  const parts = Array.isArray(message.content.parts) ? message.content.parts : [];
  // Images are pointers to files of the export; a voice message's parts carry its transcript as `text`.
  const content = parts
    .flatMap((part) =>
      typeof part === "string" ? [part] : isObject(part) && typeof part.text === "string" ? [part.text] : [],
    )
    .join("\n")
    .trim();
  if (!content) return null;
  return {
    sourceId: typeof message.id === "string" ? message.id : `#${index}`,
    role,
    content: storableText(content),
    createdAt: isoTime(message.create_time, previous),
  };
}

/** Claude: `chat_messages` in order, or, when they name parents and the conversation its leaf, the leaf's branch. */
function claudePath(conversation: Record<string, unknown>): unknown[] {
  const messages = (conversation.chat_messages as unknown[]).filter(isObject);
  const leaf = conversation.current_leaf_message_uuid;
  if (typeof leaf !== "string" || !messages.some((m) => typeof m.parent_message_uuid === "string")) return messages;
  const byId = new Map(messages.map((m) => [m.uuid, m]));
  const path: unknown[] = [];
  for (let m = byId.get(leaf); m && path.length < messages.length; m = byId.get(m.parent_message_uuid)) path.push(m);
  return path.length ? path.reverse() : messages;
}

function claudeMessage(message: unknown, index: number, previous: string): ExportedMessage | null {
  if (!isObject(message)) return null;
  const role = message.sender === "human" ? "user" : message.sender === "assistant" ? "assistant" : null;
  if (!role) return null;
  // Text blocks only: tool use, tool results and thinking were not the conversation's text.
  const blocks = Array.isArray(message.content)
    ? message.content.flatMap((b) => (isObject(b) && b.type === "text" && typeof b.text === "string" ? [b.text] : []))
    : [];
  const content = blocks.join("\n\n").trim() || (typeof message.text === "string" ? message.text.trim() : "");
  if (!content) return null;
  return {
    sourceId: typeof message.uuid === "string" ? message.uuid : `#${index}`,
    role,
    content: storableText(content),
    createdAt: isoTime(message.created_at, previous),
  };
}

/** The conversations of a parsed export, each with what it showed; a conversation that cannot be read is a problem, and the rest go on. */
export function readChatExport(value: unknown[], source: ChatExportSource, now: string): ChatExport {
  const result: ChatExport = { source, read: value.length, conversations: [], problems: [] };
  if (value.length > CHAT_EXPORT_LIMITS.conversations) {
    throw new Error(`the export holds ${value.length} conversations; the limit is ${CHAT_EXPORT_LIMITS.conversations}`);
  }
  const fallbackTitle = source === "chatgpt" ? "ChatGPT conversation" : "Claude conversation";
  /** Reads one conversation into the result; answers what is wrong with it instead, if anything. */
  const readOne = (item: unknown, place: string): string | null => {
    if (!isObject(item)) return "expected a JSON object";
    const sourceId = source === "chatgpt" ? (text(item.conversation_id) ?? text(item.id)) : text(item.uuid);
    const idField = source === "chatgpt" ? "conversation_id" : "uuid";
    if (!sourceId) return `${idField}: is required (a string)`;
    // Kept in the thread's metadata, which stays small.
    if (sourceId.length > MAX_ID_CHARS) return `${idField}: is longer than ${MAX_ID_CHARS} characters`;
    if (source === "chatgpt" && !isObject(item.mapping)) return "mapping: is required (an object)";
    if (source === "claude" && !Array.isArray(item.chat_messages)) return "chat_messages: is required (a list)";
    const createdAt = isoTime(source === "chatgpt" ? item.create_time : item.created_at, now);
    const path = source === "chatgpt" ? chatgptPath(item) : claudePath(item);
    if (typeof path === "string") return path;
    const messages: ExportedMessage[] = [];
    for (const [index, raw] of path.entries()) {
      const message =
        source === "chatgpt"
          ? chatgptMessage(raw, index, messages.at(-1)?.createdAt ?? createdAt)
          : claudeMessage(raw, index, messages.at(-1)?.createdAt ?? createdAt);
      if (message) messages.push(message);
    }
    if (messages.length > CHAT_EXPORT_LIMITS.messages)
      return `${messages.length} messages; the limit is ${CHAT_EXPORT_LIMITS.messages} per conversation`;
    result.conversations.push({
      place,
      sourceId,
      messages,
      createdAt,
      title: titleOf(source === "chatgpt" ? item.title : item.name, messages, fallbackTitle),
      updatedAt: isoTime(
        source === "chatgpt" ? item.update_time : item.updated_at,
        messages.at(-1)?.createdAt ?? createdAt,
      ),
    });
    return null;
  };
  for (const [i, item] of value.entries()) {
    const place = `conversations[${i}]`;
    const message = readOne(item, place);
    if (message !== null) result.problems.push({ place, message });
  }
  return result;
}
