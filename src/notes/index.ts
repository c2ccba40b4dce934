import { t } from "elysia";
import { authPlugin } from "../auth/plugin";
import type { AuthService } from "../auth/service";
import { errorResponses } from "../shared/error-body";
import { bindingFor, type SealMap } from "../crypto/binding";
import { decryptPlugin, type EncryptionOptions } from "../crypto/plugin";
import { documentFieldSeals } from "../documents/present";
import { createRouter } from "../lib/router";
import { WorkspaceParams } from "../shared/schemas";
import { NEXT_CURSOR_HEADER, PageQuery } from "../shared/pagination";
import { DOCUMENT_BODY_LIMIT } from "../documents/model";
import {
  CreateNoteBody,
  LegacyNote,
  LegacyNoteEntry,
  NotebookParams,
  NotebookRecord,
  NotebookRegistry,
  NoteParams,
  NoteWritten,
  PatchNoteBody,
  NOTEBOOKS_BODY_LIMIT,
  SaveNotebooksBody,
  Success,
} from "./model";
import { registryBinding, type NoteService } from "./service";

const tags = ["legacy notes"];
const base = "/v1/workspaces/:workspaceId";

/** A note's `{document, blocks, markdown}`: the note is the document the path names. */
const noteSeals: SealMap = ({ userId, params }) =>
  documentFieldSeals(userId, params.noteId ?? "", {
    document: "documentPayload",
    blocks: "blocksPayload",
    markdown: "markdown",
  });
/** The list's entries: each `ciphertext` is its note's `documentPayload`. */
const noteListSeals: SealMap =
  ({ response, userId }) =>
  (path) => {
    const entry =
      Array.isArray(response) && typeof path[0] === "number" ? (response[path[0]] as { id?: unknown }) : undefined;
    return path.length === 2 && path[1] === "ciphertext" && typeof entry?.id === "string"
      ? bindingFor(userId, "document", entry.id)("documentPayload")
      : null;
  };
/** `{ciphertext}`: the workspace's notebook registry. */
const registrySeals: SealMap =
  ({ userId, params }) =>
  (path) =>
    path.length === 1 && path[0] === "ciphertext" ? registryBinding(userId, params.workspaceId ?? "") : null;

/** Routes of legacy notes and notebooks (docs/api.md#legacy-notes-and-notebooks): they never update the derived index. */
export function noteRoutes(auth: AuthService, notes: NoteService, encryption: EncryptionOptions) {
  return createRouter()
    .use(authPlugin(auth))
    .use(decryptPlugin(encryption))
    .get(
      `${base}/notes`,
      async ({ principal, params, query, set }) => {
        const page = await notes.list(principal.userId, params.workspaceId, query);
        if (page.nextCursor) set.headers[NEXT_CURSOR_HEADER] = page.nextCursor;
        return page.items;
      },
      {
        auth: "memory:read",
        decrypt: noteListSeals,
        params: WorkspaceParams,
        query: PageQuery,
        response: { 200: t.Array(LegacyNoteEntry), ...errorResponses() },
        detail: {
          tags,
          summary:
            "List notes (a raw array, oldest first; ?limit= default 50, at most 200, fewer past 8 MB; X-Next-Cursor names the next page's ?cursor=)",
        },
      },
    )
    .post(
      `${base}/notes`,
      async ({ principal, params, body, set, writeKey }) => {
        const { id, created } = await notes.save(
          principal.userId,
          params.workspaceId,
          body,
          await writeKey(principal.userId, undefined),
        );
        set.status = created ? 201 : 200;
        return { success: true as const, id };
      },
      {
        auth: "memory:write",
        decrypt: true,
        params: WorkspaceParams,
        body: CreateNoteBody,
        bodyLimit: DOCUMENT_BODY_LIMIT,
        response: { 200: NoteWritten, 201: NoteWritten, ...errorResponses() },
        detail: {
          tags,
          summary: "Save a note (201 new; 200 when documentId names an existing note, which is rewritten)",
        },
      },
    )
    .get(
      `${base}/notes/:noteId`,
      async ({ principal, params }) => notes.get(principal.userId, params.workspaceId, params.noteId),
      {
        auth: "memory:read",
        decrypt: noteSeals,
        params: NoteParams,
        response: { 200: LegacyNote, ...errorResponses() },
        detail: { tags, summary: "Get a note: {document, blocks, markdown}" },
      },
    )
    .patch(
      `${base}/notes/:noteId`,
      async ({ principal, params, body, writeKey }) => {
        const carriesPayload =
          body.documentPayload !== undefined || body.blocksPayload !== undefined || body.markdown !== undefined;
        const key = carriesPayload ? await writeKey(principal.userId, undefined) : undefined;
        return {
          success: true as const,
          id: await notes.patch(principal.userId, params.workspaceId, params.noteId, body, key),
        };
      },
      {
        auth: "memory:write",
        decrypt: true,
        params: NoteParams,
        body: PatchNoteBody,
        bodyLimit: DOCUMENT_BODY_LIMIT,
        response: { 200: NoteWritten, ...errorResponses() },
        detail: { tags, summary: "Rewrite the parts of a note present in the body" },
      },
    )
    .delete(
      `${base}/notes/:noteId`,
      async ({ principal, params }) => {
        await notes.remove(principal.userId, params.workspaceId, params.noteId);
        return { success: true as const };
      },
      {
        auth: "memory:write",
        decrypt: true,
        params: NoteParams,
        response: { 200: Success, ...errorResponses() },
        detail: { tags, summary: "Delete a note (it leaves search at once, as a document delete does)" },
      },
    )
    .get(
      `${base}/notebooks`,
      async ({ principal, params }) => notes.notebookRegistry(principal.userId, params.workspaceId),
      {
        auth: "memory:read",
        decrypt: registrySeals,
        params: WorkspaceParams,
        response: { 200: NotebookRegistry, ...errorResponses() },
        detail: { tags, summary: "Get the notebook registry ({ciphertext: null} when none was saved)" },
      },
    )
    .post(
      `${base}/notebooks`,
      async ({ principal, params, body, writeKey }) => {
        await notes.saveNotebookRegistry(
          principal.userId,
          params.workspaceId,
          body.ciphertext,
          await writeKey(principal.userId, undefined),
        );
        return { success: true as const };
      },
      {
        auth: "memory:write",
        decrypt: true,
        params: WorkspaceParams,
        body: SaveNotebooksBody,
        bodyLimit: NOTEBOOKS_BODY_LIMIT,
        response: { 200: Success, ...errorResponses() },
        detail: { tags, summary: "Save the notebook registry" },
      },
    )
    .get(
      `${base}/notebooks/:notebookId`,
      async ({ principal, params, request }) => {
        // An encrypted registry can only be searched once opened: with X-Proxy-Decrypt, the caller's key opens it first.
        const key =
          request.headers.get("x-proxy-decrypt")?.toLowerCase() === "true"
            ? await encryption.keys.resolve(principal.userId, request.headers.get("x-client-key"))
            : null;
        return { notebook: await notes.notebook(principal.userId, params.workspaceId, params.notebookId, key) };
      },
      {
        auth: "memory:read",
        decrypt: true,
        params: NotebookParams,
        response: { 200: NotebookRecord, ...errorResponses() },
        detail: { tags, summary: "Get one notebook's record, when the registry is plaintext JSON listing it" },
      },
    );
}
