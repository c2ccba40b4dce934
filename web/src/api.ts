/**
 * The app's one HTTP client: the only module that calls fetch (or XMLHttpRequest, for
 * upload progress). Every request is same-origin, carries `X-Mnemo-App: 1` (a header a
 * cross-site form cannot send, so a cookie session stays CSRF-safe) and the session
 * cookie (made from a sign-in link or a pasted API key). A client key for encrypted notes
 * is held in this module's memory only and sent as `X-Client-Key`.
 */
import type {
  ApiResponse,
  CreatedKey,
  Credits,
  DailyUsage,
  ExtractionJob,
  FileInfo,
  Health,
  Me,
  Memory,
  MemoryFilters,
  MemoryProposal,
  NewMemory,
  ScoredMemory,
  SearchResponse,
  UploadUrl,
  Usage,
  Workspace,
  WorkspaceContents,
  JsonObject,
} from "./api-types";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
  get notFound(): boolean {
    return this.status === 404;
  }
}

let clientKey: string | null = null;
/** Who this tab signed in as: sent as X-Mnemo-User, so a sign-in as someone else in another tab ends this one's session. */
let sessionUser: string | null = null;
let escrowDecrypt = false;
const signedOutListeners = new Set<() => void>();

/** Called when the server answers 401 to a signed-in request: the session ended. */
export function onSignedOut(listener: () => void): void {
  signedOutListeners.add(listener);
}

/** The decryption the app asks for on note and document reads. */
export function setDecryption(options: { clientKey?: string | null; escrow?: boolean }): void {
  if (options.clientKey !== undefined) clientKey = options.clientKey;
  if (options.escrow !== undefined) escrowDecrypt = options.escrow;
}
export const decryption = () => ({ hasClientKey: clientKey !== null, escrow: escrowDecrypt });

type Query = Record<string, string | number | undefined | null>;
interface RequestOptions {
  body?: unknown;
  query?: Query;
  signal?: AbortSignal;
  /** Adds X-Proxy-Decrypt (and X-Client-Key) when the user gave a key or chose the escrowed one. */
  decrypt?: boolean;
  /** A 401 here is an answer (sign-in), not the end of a session. */
  authAttempt?: boolean;
}

function headersFor(options: RequestOptions): Headers {
  const headers = new Headers({ "X-Mnemo-App": "1", Accept: "application/json" });
  if (sessionUser !== null) headers.set("X-Mnemo-User", encodeURIComponent(sessionUser));
  if (options.body !== undefined) headers.set("Content-Type", "application/json");
  if (options.decrypt && (clientKey || escrowDecrypt)) {
    // The server decrypts only for exactly "true".
    headers.set("X-Proxy-Decrypt", "true");
    if (clientKey) headers.set("X-Client-Key", clientKey);
  }
  return headers;
}

function urlFor(path: string, query?: Query): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {}))
    if (value !== undefined && value !== null && value !== "") params.set(key, String(value));
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}

async function errorFrom(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => "");
  let code = `http_${response.status}`;
  let message = `The server answered ${response.status} ${response.statusText}`.trim();
  try {
    const body = JSON.parse(text);
    if (body?.error?.message)
      ({ code, message } = { code: String(body.error.code ?? code), message: String(body.error.message) });
    else if (typeof body?.details === "string") message = body.details;
  } catch {}
  return new ApiError(response.status, code, message);
}

export async function send(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(urlFor(path, options.query), {
      method,
      headers: headersFor(options),
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      credentials: "same-origin",
      signal: options.signal,
    });
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    throw new ApiError(0, "network", "The server did not answer. Is `mnemo serve` running?");
  }
  if (response.ok) return response;
  const error = await errorFrom(response);
  if (error.status === 401 && !options.authAttempt) for (const listener of signedOutListeners) listener();
  throw error;
}

export async function json<T>(method: string, path: string, options?: RequestOptions): Promise<T> {
  const response = await send(method, path, options);
  return (await response.json()) as T;
}

/** A list answered as a bare array with the next page's cursor in X-Next-Cursor. */
export async function arrayPage<T>(
  path: string,
  cursor: string | undefined,
  options: RequestOptions = {},
): Promise<{ items: T[]; nextCursor: string | null }> {
  const response = await send("GET", path, { ...options, query: { ...options.query, cursor } });
  return { items: (await response.json()) as T[], nextCursor: response.headers.get("x-next-cursor") };
}

export const seg = encodeURIComponent;
export const ws = (workspaceId: string) => `/v1/workspaces/${seg(workspaceId)}`;

// ── Session ────────────────────────────────────────────────────────────────────────

/** Who the session belongs to; 401 when there is none. */
export async function me(): Promise<Me> {
  const answer = await json<Me>("GET", "/v1/me", { authAttempt: true });
  sessionUser = answer.userId;
  return answer;
}

/** Exchanges a one-time sign-in link's token for a session cookie (HttpOnly: this page never sees it). */
export async function signInWithToken(token: string): Promise<string> {
  sessionUser = null;
  sessionUser = (
    await json<ApiResponse<"postV1AppSession">>("POST", "/v1/app/session", { body: { token }, authAttempt: true })
  ).userId;
  return sessionUser;
}

/** Whom a sign-in link's token signs in, without using it (asked before it replaces an open session). */
export const signInLinkUser = (token: string) =>
  json<ApiResponse<"postV1AppLink">>("POST", "/v1/app/link", { body: { token }, authAttempt: true });

/** Exchanges a pasted API key for a session cookie of the same user and scopes; the key is not kept. */
export async function signInWithKey(apiKey: string): Promise<string> {
  sessionUser = null;
  sessionUser = (
    await json<ApiResponse<"postV1AppSession">>("POST", "/v1/app/session", { body: { apiKey }, authAttempt: true })
  ).userId;
  return sessionUser;
}

/** Forgets every secret this page holds (the client key for encrypted notes). */
export function forgetSession(): void {
  sessionUser = null;
  clientKey = null;
  escrowDecrypt = false;
}

/** Ends the session on the server (its cookie is cleared) and forgets every secret this page held. */
export async function signOut(): Promise<void> {
  try {
    await send("DELETE", "/v1/app/session", { authAttempt: true });
  } catch (error) {
    // The session had already ended (expired, or signed out in another tab).
    if (!(error instanceof ApiError) || error.status !== 401) throw error;
  } finally {
    forgetSession();
  }
}

// ── Memories ───────────────────────────────────────────────────────────────────────

export const listMemories = (page: { limit?: number; cursor?: string } & MemoryFilters, signal?: AbortSignal) =>
  json<ApiResponse<"getV1Memories">>("GET", "/v1/memories", { query: { ...page }, signal });

export const searchMemories = (
  query: string,
  options: { limit?: number; filters?: { workspaceId?: string; session_id?: string } },
  signal?: AbortSignal,
) =>
  json<SearchResponse>("POST", "/v1/memories/search", {
    body: { query, limit: options.limit ?? 50, filters: options.filters },
    signal,
  });

export const getMemory = (id: string, signal?: AbortSignal) =>
  json<Memory>("GET", `/v1/memories/${seg(id)}`, { signal });
export const createMemory = (memory: NewMemory) => json<Memory>("POST", "/v1/memories", { body: memory });
/** Adds a memory; `duplicate`: the user already had it (same text and workspace), nothing was stored and `memory` is that one. */
export async function addMemory(memory: NewMemory): Promise<{ memory: Memory; duplicate: boolean }> {
  const response = await send("POST", "/v1/memories", { body: memory });
  return { memory: (await response.json()) as Memory, duplicate: response.headers.get("x-svc-duplicate") === "true" };
}
export const updateMemory = (id: string, changes: { content?: string; metadata?: JsonObject }) =>
  json<Memory>("PATCH", `/v1/memories/${seg(id)}`, { body: changes });
export const deleteMemory = (id: string) =>
  json<ApiResponse<"deleteV1MemoriesById">>("DELETE", `/v1/memories/${seg(id)}`);
export const memoryHistory = (id: string, signal?: AbortSignal) =>
  json<ApiResponse<"getV1MemoriesByIdHistory">>("GET", `/v1/memories/${seg(id)}/history`, { signal });
/** Pending proposals of automatic formation, oldest first. */
export const listProposals = (cursor?: string, signal?: AbortSignal) =>
  json<ApiResponse<"getV1MemoriesProposals">>("GET", "/v1/memories/proposals", {
    query: { limit: 50, cursor },
    signal,
  });
/** Accepts (applies) or rejects a proposal; 409 when its memory changed since. */
export const decideProposal = (id: string, decision: "accept" | "reject") =>
  json<MemoryProposal>("POST", `/v1/memories/proposals/${seg(id)}/${decision}`);

/**
 * Puts a forgotten memory back: same id, content, metadata, workspace, session and its
 * original time.
 */
export async function restoreMemory(memory: Memory): Promise<Memory> {
  const body: NewMemory = {
    id: memory.id,
    content: memory.content,
    metadata: memory.metadata,
    timestamp: memory.createdAt,
  };
  if (memory.workspaceId) body.workspaceId = memory.workspaceId;
  if (memory.session_id) body.session_id = memory.session_id;
  return createMemory(body);
}

export type { ScoredMemory };

/** Extraction jobs of captured conversations, newest first (the latest 100). */
export const extractionJobs = (signal?: AbortSignal) =>
  json<ApiResponse<"getV1MemoriesExtractJobs">>("GET", "/v1/memories/extract/jobs", { signal });
/** Runs a failed (or retrying) job again now; answers the job, pending. */
export const retryExtractionJob = (id: string) =>
  json<ExtractionJob>("POST", `/v1/memories/extract/jobs/${seg(id)}/retry`);

// ── Workspaces and what they hold ──────────────────────────────────────────────────

export const listWorkspaces = (cursor?: string, signal?: AbortSignal) =>
  arrayPage<Workspace>("/v1/workspaces", cursor, { query: { limit: 200 }, signal });
export const getWorkspace = (id: string, signal?: AbortSignal) =>
  json<ApiResponse<"getV1WorkspacesByWorkspaceId">>("GET", ws(id), { signal }).then((r) => r.workspace);
export const createWorkspace = (name: string) => json<Workspace>("POST", "/v1/workspaces", { body: { name } });
export const renameWorkspace = (id: string, name: string) =>
  json<ApiResponse<"patchV1WorkspacesByWorkspaceId">>("PATCH", ws(id), { body: { name } }).then((r) => r.workspace);
export const workspaceContents = (id: string, signal?: AbortSignal) =>
  json<WorkspaceContents>("GET", `${ws(id)}/contents`, { signal });
/** Deletes the workspace and everything in it. */
export const deleteWorkspace = (id: string) => json<ApiResponse<"deleteV1WorkspacesByWorkspaceId">>("DELETE", ws(id));

// ── Files ──────────────────────────────────────────────────────────────────────────

export const listFiles = (workspaceId: string, cursor?: string, signal?: AbortSignal) =>
  json<ApiResponse<"getV1WorkspacesByWorkspaceIdFiles">>("GET", `${ws(workspaceId)}/files`, {
    query: { limit: 200, cursor },
    signal,
  });
export const deleteFile = (workspaceId: string, key: string) =>
  json<ApiResponse<"deleteV1WorkspacesByWorkspaceIdFilesByKey">>("DELETE", `${ws(workspaceId)}/files/${seg(key)}`);

/** The file's bytes, for a download link made from a Blob URL. */
export async function downloadFile(workspaceId: string, key: string): Promise<Blob> {
  return (await send("GET", `${ws(workspaceId)}/files/${seg(key)}`)).blob();
}

/** Asks for a presigned URL, then PUTs the bytes with XMLHttpRequest, which reports upload progress. */
export async function uploadFile(
  workspaceId: string,
  file: File,
  onProgress: (fraction: number) => void,
): Promise<FileInfo> {
  const contentType = file.type || "application/octet-stream";
  const target = await json<UploadUrl>("POST", `${ws(workspaceId)}/files/upload-url`, {
    body: { filename: file.name, contentType },
  });
  return new Promise<FileInfo>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("PUT", target.url);
    xhr.setRequestHeader("Content-Type", contentType);
    xhr.setRequestHeader("X-Mnemo-App", "1");
    xhr.upload.onprogress = (event) => event.lengthComputable && onProgress(event.loaded / event.total);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) return resolve(JSON.parse(xhr.responseText) as FileInfo);
      let message = `The upload answered ${xhr.status}`;
      try {
        message = JSON.parse(xhr.responseText).error.message ?? message;
      } catch {}
      reject(new ApiError(xhr.status, "upload_failed", message));
    };
    xhr.onerror = () => reject(new ApiError(0, "network", "The upload did not reach the server"));
    xhr.send(file);
  });
}

// ── Your server ────────────────────────────────────────────────────────────────────

export const listKeys = (signal?: AbortSignal) => json<ApiResponse<"getV1Keys">>("GET", "/v1/keys", { signal });
export const createKey = (input: { name: string; scopes?: string[] }) =>
  json<CreatedKey>("POST", "/v1/keys", { body: input });
export const revokeKey = (id: string) => json<unknown>("DELETE", `/v1/keys/${seg(id)}`);
export const usage = (signal?: AbortSignal) => json<Usage>("GET", "/v1/usage", { signal });
export const credits = (signal?: AbortSignal) => json<Credits>("GET", "/v1/credits", { signal });
export const usageDaily = (signal?: AbortSignal) => json<DailyUsage>("GET", "/v1/usage/daily", { signal });
export const health = (signal?: AbortSignal) => json<Health>("GET", "/health", { signal });
