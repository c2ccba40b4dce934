/**
 * The shapes the app reads from Mnemo's HTTP API (see /openapi). Routes marked "later"
 * are answered by a newer server; the app degrades when they answer 404.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface Me {
  userId: string;
  clientKeyEscrow: { present: boolean };
}

export interface Memory {
  id: string;
  ownerId: string;
  projectId: string;
  content: string;
  metadata: JsonObject;
  status: string;
  workspaceId: string | null;
  session_id: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A hit's score by each signal that ranked it: `{text, words, time, vector}`, each in [0, 1]. */
export type Signals = Record<string, number>;
export interface ScoredMemory extends Memory {
  score: number;
  signals?: Signals;
}
export interface SearchResponse {
  results: ScoredMemory[];
  mode: string;
  strategy?: string;
  /** The signals that ranked (text, words, time, vector). */
  signals?: string[];
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
  hasMore: boolean;
}

export interface MemoryFilters {
  workspaceId?: string;
  session_id?: string;
  /** YYYY-MM-DD or an ISO time (later). */
  from?: string;
  to?: string;
}

export interface NewMemory {
  content: string;
  id?: string;
  metadata?: JsonObject;
  workspaceId?: string;
  session_id?: string;
  /** ISO time the memory is about (later). */
  timestamp?: string;
}

export interface MemoryVersion {
  version: number;
  content: string;
  metadata: JsonObject;
  changedAt: string;
  event?: "created" | "updated" | "deleted";
  reason: string;
  source?: string;
}

/** A change automatic formation (capture) proposed to a memory the person wrote (`GET /v1/memories/proposals`). */
export interface MemoryProposal {
  id: string;
  memoryId: string;
  /** The memory as it is now; null once deleted. */
  memory: Memory | null;
  workspaceId: string | null;
  action: "update" | "delete";
  /** update: the proposed text. */
  content: string | null;
  threadId: string | null;
  messageIds: string[];
  model: string | null;
  createdAt: string;
  status: "pending" | "accepted" | "rejected";
}

export interface Workspace {
  id: string;
  name: string;
  createdAt: string;
  updatedAt: string;
}

/** What a workspace holds (`GET /v1/workspaces/:id/contents`): what a delete removes. */
export interface WorkspaceContents {
  workspaceId: string;
  documents: number;
  threads: number;
  messages: number;
  files: number;
  memories: number;
  jobs: number;
}

export interface DocumentSummary {
  id: string;
  workspaceId: string;
  notebookId: string | null;
  title: string;
  slug: string;
  createdAt: string;
  updatedAt: string;
  _meta: JsonObject;
}

export interface FullDocument {
  id: string;
  workspace_id: string;
  document_type: string;
  title: string;
  notebook_id: string | null;
  markdown: string;
  metadata: JsonObject;
  created_at: string;
  updated_at: string;
}
export interface DocumentWithContent {
  document: FullDocument;
  blocks: Json;
  markdown: string;
}

export interface NoteEntry {
  id: string;
  format: string;
  ciphertext: string | null;
  document?: Json;
  _meta: JsonObject;
}
export interface Note {
  document: Json;
  blocks: Json;
  markdown: string;
}

export interface Thread {
  id: string;
  title: string;
  messageCount: number;
  metadata: JsonObject;
  createdAt: string;
  updatedAt: string;
}
export interface Message {
  id: string;
  role: "user" | "assistant";
  content?: string;
  encryptedContent?: string;
  parentId: string | null;
  createdAt: string;
}

export interface FileInfo {
  key: string;
  name: string;
  type: string;
  size: number;
  sha256: string;
  createdAt: string;
}
export interface UploadUrl {
  url: string;
  key: string;
  method: "PUT";
  expiresAt: string;
}

export interface BlockEdge {
  type: string;
  from: { documentId: string; blockId: string };
  to: { documentId: string | null; blockId: string | null };
  target: string;
}

export interface ApiKey {
  id: string;
  /** Null for a key made in the terminal without --name. */
  name: string | null;
  scopes: string[];
  createdAt: string;
  lastUsedAt: string | null;
}
export interface CreatedKey extends ApiKey {
  /** The secret, shown once. */
  key: string;
}

export interface Usage {
  month: string;
  usage: { totalTokens: number; requestCount: number };
}
export interface Credits {
  used: number;
  limit: number;
  remaining: number;
  month: string;
}
export interface DailyUsage {
  month: string;
  days: Array<{ day: string; totalTokens: number; requestCount: number }>;
}

/** GET /health with the app's session: the user's own backlog; the server's details only for an operator's credential. */
export interface Health {
  status: string;
  store: string;
  /** `off`, `ok`, or `unavailable: <reason>` while the embedding model's vectors cannot be made. */
  vectors?: string;
  index: {
    status: string;
    pending: number | null;
    pendingVectors: number | null;
    oldestPendingAt: string | null;
    writer?: boolean;
    lastIndexedAt?: string | null;
    lastError?: string | null;
    failingSince?: string | null;
    consecutiveFailures?: number;
  };
}

/** GET /v1/memories/extract/jobs: an extraction job of a captured conversation. */
export interface ExtractionJob {
  id: string;
  /** retrying: its last attempt failed, the next is due at nextAttemptAt. */
  status: "pending" | "running" | "retrying" | "done" | "failed";
  attempts: number;
  lastError: string | null;
  nextAttemptAt: string | null;
  /** false: the conversation could not be stored; nothing to retry. */
  captured: boolean;
  retryable: boolean;
  threadId: string;
  workspaceId: string | null;
  createdAt: string;
  updatedAt: string;
}
