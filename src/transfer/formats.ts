import { createHash } from "node:crypto";
import { MAX_CONTENT_BYTES, MAX_METADATA_BYTES } from "../memories/model";
import { TABLE_BY_TYPE } from "./tables";
import { readTimestamp } from "../shared/timestamp";

/** Where an entry came from, for messages: `line 12` of a JSONL file, or `memories[3]` of a JSON document. */
export type Place = string;

/** A memory from any accepted format, ready to store. */
export interface ImportedMemory {
  id: string;
  content: string;
  metadata: Record<string, unknown>;
  workspaceId: string | null;
  sessionId: string | null;
  createdAt: string;
  updatedAt: string;
}

export type Entry =
  | { kind: "record"; place: Place; record: Record<string, unknown> }
  | { kind: "memory"; place: Place; memory: ImportedMemory }
  | { kind: "error"; place: Place; message: string };

/** The formats `mnemo import` recognises in a file (a folder is Markdown). */
/** `mnemo-app-export`: the web app's "Export" download, `{exportedAt, filters, count, memories: [memory as the API lists it]}`. */
export type FileFormat =
  | "mnemo-export"
  | "mnemo-app-export"
  | "mem0-export"
  | "mem0-get-all"
  | "supermemory"
  | "content-lines";

const ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
const encoder = new TextEncoder();
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * An ISO timestamp from whatever a source wrote (ISO 8601 as `timestamp` takes it, epoch seconds
 * or ms, else anything `Date.parse` reads as UTC-bounded); `fallback` when absent, unparsable or
 * outside 1970–9999 (src/shared/timestamp.ts).
 */
export function isoTime(value: unknown, fallback: string): string {
  if (typeof value === "number") value = value < 1e12 ? value : value / 1000;
  let time = readTimestamp(value);
  if (typeof time !== "number" && typeof value === "string" && value) time = readTimestamp(Date.parse(value) / 1000);
  return typeof time === "number" ? new Date(time).toISOString() : fallback;
}

/**
 * The id a memory gets: the source's own id when it is a valid Mnemo id (mem0 and
 * Supermemory ids are), else one derived from the content and metadata (and
 * workspace and session), so a re-run finds the same ids and adds nothing twice.
 */
export function memoryId(
  sourceId: unknown,
  content: string,
  metadata: Record<string, unknown>,
  workspaceId: string | null,
  sessionId: string | null,
): string {
  if (typeof sourceId === "string" && ID.test(sourceId)) return sourceId;
  const key =
    typeof sourceId === "string" || typeof sourceId === "number"
      ? `id\u001f${sourceId}`
      : `content\u001f${workspaceId ?? ""}\u001f${sessionId ?? ""}\u001f${JSON.stringify(metadata)}\u001f${content}`;
  return `imp_${createHash("sha256").update(key).digest("hex").slice(0, 32)}`;
}

const str = (v: unknown): string | null => (typeof v === "string" && v ? v : null);

/** Maps one item of a memory format onto a memory; throws a message naming the field. */
export function toMemory(item: unknown, format: FileFormat, now: string, workspaceOverride?: string): ImportedMemory {
  if (!isObject(item)) throw new Error("expected a JSON object");
  const metadata: Record<string, unknown> = isObject(item.metadata) ? { ...item.metadata } : {};
  let content: unknown;
  let sessionId = str(item.session_id) ?? str(item.sessionId);
  if (format === "mem0-export" || format === "mem0-get-all" || ("memory" in item && !("content" in item))) {
    // mem0: {id, memory, metadata, categories, created_at, updated_at, user_id, agent_id, run_id, hash}
    content = item.memory;
    if (Array.isArray(item.categories)) metadata.categories = item.categories;
    sessionId ??= str(item.run_id);
    if (str(item.agent_id)) metadata.agent_id = item.agent_id;
  } else if (format === "supermemory") {
    // Supermemory: {id, customId, content, summary, title, metadata, containerTags, createdAt, updatedAt}
    content = str(item.content) ?? str(item.summary) ?? str(item.title);
    if (str(item.title)) metadata.title = item.title;
    if (Array.isArray(item.containerTags)) metadata.containerTags = item.containerTags;
    if (str(item.customId)) metadata.customId = item.customId;
  } else {
    content = item.content;
  }
  if (typeof content !== "string")
    throw new Error(
      `${format === "supermemory" ? "content" : "memory" in item ? "memory" : "content"}: is required (a string)`,
    );
  if (!content.trim()) throw new Error("content: must not be blank");
  const bytes = encoder.encode(content).byteLength;
  if (bytes > MAX_CONTENT_BYTES) throw new Error(`content: is ${bytes} bytes; the limit is ${MAX_CONTENT_BYTES}`);
  if (encoder.encode(JSON.stringify(metadata)).byteLength > MAX_METADATA_BYTES)
    throw new Error(`metadata: is larger than ${MAX_METADATA_BYTES} bytes`);
  const workspaceId = workspaceOverride ?? str(item.workspace_id) ?? str(item.workspaceId);
  const createdAt = isoTime(item.created_at ?? item.createdAt ?? item.timestamp, now);
  return {
    id: memoryId(item.id, content, metadata, workspaceId, sessionId),
    content,
    metadata,
    workspaceId,
    sessionId,
    createdAt,
    updatedAt: isoTime(item.updated_at ?? item.updatedAt, createdAt),
  };
}

/** A file in none of the formats, and why, in words (`it is neither JSON nor JSON Lines`). */
export interface Unrecognised {
  unrecognised: string;
}

/** The formats `mnemo import` knows, for the message that names none of them matched. */
export const KNOWN_FORMATS =
  'a Mnemo export (mnemo export) or the web app\'s export, ChatGPT\'s or Claude\'s data export (conversations.json or its zip), mem0\'s export {"memories": […]} or get_all [{"memory": …}] / {"results": […]}, ' +
  'Supermemory\'s export {"documents"|"memories": […]}, JSON Lines of {"content": …}, or a folder of Markdown files';

/** Whether a value looks like one memory of a known format (its text under `content` or `memory`). */
const memoryShaped = (value: unknown) => isObject(value) && ("content" in value || "memory" in value);

/** Which format a whole-file JSON document is, and its items. */
function jsonDocument(value: unknown): { format: FileFormat; items: unknown[]; path: string } | null {
  if (Array.isArray(value)) {
    const firstItem = value.find(isObject);
    return {
      format:
        firstItem && "memory" in firstItem
          ? "mem0-get-all"
          : firstItem && ("customId" in firstItem || "containerTags" in firstItem)
            ? "supermemory"
            : "content-lines",
      items: value,
      path: "",
    };
  }
  if (!isObject(value)) return null;
  // The web app's export: the API's memory records under a header of its own.
  if (Array.isArray(value.memories) && typeof value.exportedAt === "string" && typeof value.count === "number")
    return { format: "mnemo-app-export", items: value.memories, path: "memories" };
  if (Array.isArray(value.memories)) {
    const firstItem = value.memories.find(isObject);
    return {
      format: firstItem && !("memory" in firstItem) && "content" in firstItem ? "supermemory" : "mem0-export",
      items: value.memories,
      path: "memories",
    };
  }
  if (Array.isArray(value.results)) return { format: "mem0-get-all", items: value.results, path: "results" };
  if (Array.isArray(value.documents)) return { format: "supermemory", items: value.documents, path: "documents" };
  return null;
}

/**
 * Reads a file in any accepted format into entries. A whole-file JSON document (mem0's
 * export `{memories: […]}`, its `get_all` list or `{results: […]}`, Supermemory's
 * `{documents|memories: […]}`, or an array) is read at once; anything else is JSON
 * Lines: our export, or one memory object per line. A bad line is an `error` entry
 * naming its line number, and the rest go on.
 */
export function* readEntries(
  text: string,
  now: string,
  workspaceOverride?: string,
): Generator<Entry, FileFormat | Unrecognised> {
  const trimmed = text.trimStart();
  // JSON Lines fail to parse as one document at their second line, so trying costs little.
  if (trimmed.startsWith("[") || trimmed.startsWith("{")) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    const doc = value === undefined ? null : jsonDocument(value);
    if (doc && !doc.path && doc.items.length > 0 && !doc.items.some(memoryShaped)) {
      return { unrecognised: 'it is a JSON list whose entries have neither "content" nor "memory"' };
    }
    if (!doc && isObject(value) && !memoryShaped(value) && typeof value.type !== "string") {
      return {
        unrecognised: 'it is a JSON object with none of "memories", "results", "documents", "content" or "memory"',
      };
    }
    if (doc) {
      for (let i = 0; i < doc.items.length; i++) {
        const place = `${doc.path}[${i}]`;
        try {
          yield { kind: "memory", place, memory: toMemory(doc.items[i], doc.format, now, workspaceOverride) };
        } catch (error) {
          yield { kind: "error", place, message: (error as Error).message };
        }
      }
      return doc.format;
    }
  }
  let format: FileFormat | null = null;
  let json = false;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line) continue;
    const place = `line ${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      yield { kind: "error", place, message: `not JSON: ${(error as Error).message}` };
      continue;
    }
    json = true;
    if (
      isObject(value) &&
      typeof value.type === "string" &&
      (value.type === "header" || value.type === "file_data" || TABLE_BY_TYPE.has(value.type))
    ) {
      format ??= "mnemo-export";
      yield { kind: "record", place, record: value };
      continue;
    }
    if (memoryShaped(value)) format ??= "memory" in (value as object) ? "mem0-get-all" : "content-lines";
    try {
      yield {
        kind: "memory",
        place,
        memory: toMemory(
          value,
          isObject(value) && "memory" in value ? "mem0-get-all" : "content-lines",
          now,
          workspaceOverride,
        ),
      };
    } catch (error) {
      yield { kind: "error", place, message: (error as Error).message };
    }
  }
  if (format) return format;
  return {
    unrecognised: json
      ? 'no line is a Mnemo export record or has "content" or "memory"'
      : "it is neither JSON nor JSON Lines",
  };
}
