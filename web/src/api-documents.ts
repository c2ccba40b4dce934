/**
 * The documents, notes and chats of a workspace, through the app's one HTTP client
 * (api.ts, which alone speaks to the network).
 */
import { arrayPage, json, send, seg, ws } from "./api";
import type {
  ApiResponse,
  BlockEdge,
  DocumentWithContent,
  JsonObject,
  Message,
  Note,
  NoteEntry,
  Thread,
} from "./api-types";

export const listDocuments = (
  workspaceId: string,
  options: { cursor?: string; notebookId?: string },
  signal?: AbortSignal,
) =>
  json<ApiResponse<"getV1WorkspacesByWorkspaceIdDocuments">>("GET", `${ws(workspaceId)}/documents`, {
    query: { limit: 200, cursor: options.cursor, notebookId: options.notebookId },
    signal,
    decrypt: true,
  });

/** A decrypted read's body, with `decryptErrors`: how many values the given key could not open. */
async function decrypted<T>(path: string, signal?: AbortSignal): Promise<T & { decryptErrors: number }> {
  const response = await send("GET", path, { signal, decrypt: true });
  return {
    ...((await response.json()) as T),
    decryptErrors: Number(response.headers.get("x-svc-decrypt-errors") ?? 0),
  };
}

/** A document with its Markdown. */
export const getDocument = (workspaceId: string, documentId: string, signal?: AbortSignal) =>
  decrypted<DocumentWithContent>(`${ws(workspaceId)}/documents/${seg(documentId)}`, signal);
export const createDocument = (workspaceId: string, document: { title: string; markdown: string }) =>
  json<ApiResponse<"postV1WorkspacesByWorkspaceIdDocuments">>("POST", `${ws(workspaceId)}/documents`, {
    body: document,
  });

/** Renames a document (its title). */
export const renameDocument = (workspaceId: string, documentId: string, title: string) =>
  json<ApiResponse<"putV1WorkspacesByWorkspaceIdDocumentsByDocumentId">>(
    "PUT",
    `${ws(workspaceId)}/documents/${seg(documentId)}`,
    { body: { title } },
  );
/** Deletes a document (a note too: notes are documents) and its search entries. */
export const deleteDocument = (workspaceId: string, documentId: string) =>
  json<ApiResponse<"deleteV1WorkspacesByWorkspaceIdDocumentsByDocumentId">>(
    "DELETE",
    `${ws(workspaceId)}/documents/${seg(documentId)}`,
  );
/** Rewrites a plaintext note's payload (a rename sets its `title`, which is also the document's title). */
export const patchNote = (workspaceId: string, noteId: string, documentPayload: JsonObject) =>
  json<ApiResponse<"patchV1WorkspacesByWorkspaceIdNotesByNoteId">>("PATCH", `${ws(workspaceId)}/notes/${seg(noteId)}`, {
    body: { documentPayload },
  });

export const listNotes = (workspaceId: string, cursor?: string, signal?: AbortSignal) =>
  arrayPage<NoteEntry>(`${ws(workspaceId)}/notes`, cursor, { query: { limit: 200 }, signal, decrypt: true });
export const getNote = (workspaceId: string, noteId: string, signal?: AbortSignal) =>
  decrypted<Note>(`${ws(workspaceId)}/notes/${seg(noteId)}`, signal);
export const getNotebooks = (workspaceId: string, signal?: AbortSignal) =>
  json<{ ciphertext: string | null }>("GET", `${ws(workspaceId)}/notebooks`, { signal, decrypt: true });

export const listThreads = (workspaceId: string, cursor?: string, signal?: AbortSignal) =>
  arrayPage<Thread>(`${ws(workspaceId)}/chats`, cursor, { query: { limit: 200 }, signal, decrypt: true });
export const renameThread = (workspaceId: string, threadId: string, title: string) =>
  json<ApiResponse<"patchV1WorkspacesByWorkspaceIdChatsByThreadId">>(
    "PATCH",
    `${ws(workspaceId)}/chats/${seg(threadId)}`,
    { body: { title } },
  );
/** Deletes a thread, its messages and their search entries. */
export const deleteThread = (workspaceId: string, threadId: string) =>
  json<ApiResponse<"deleteV1WorkspacesByWorkspaceIdChatsByThreadId">>(
    "DELETE",
    `${ws(workspaceId)}/chats/${seg(threadId)}`,
  );
export const listMessages = (workspaceId: string, threadId: string, cursor?: string, signal?: AbortSignal) =>
  arrayPage<Message>(`${ws(workspaceId)}/chats/${seg(threadId)}/messages`, cursor, {
    query: { limit: 200 },
    signal,
    decrypt: true,
  });

export const blockEdges = (workspaceId: string, signal?: AbortSignal) =>
  json<{ edges: BlockEdge[] | JsonObject }>("GET", `${ws(workspaceId)}/graph/block-edges`, { signal, decrypt: true });
