/**
 * The shapes the app reads from Mnemo's HTTP API, by the names the app uses. Each is the
 * generated type of the route that answers it (web/src/api-schema.ts, generated from the
 * OpenAPI document by `npm run generate:clients`), so a field added to a route's schema
 * reaches the app's types without an edit here.
 */
import type { Api } from "./api-schema";

/** What an operation answers (its success response), by operationId. */
export type ApiResponse<K extends keyof Api> = Api[K]["response"];
type Response<K extends keyof Api> = ApiResponse<K>;
type Body<K extends keyof Api> = Api[K]["body"];
type Query<K extends keyof Api> = Api[K]["query"];
/** The element type of a list: a bare array, or the array in a field of the answer. */
type Item<T> = T extends Array<infer I> ? I : never;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export type Me = Response<"getV1Me">;

export type Memory = Response<"getV1MemoriesById">;
export type SearchResponse = Response<"postV1MemoriesSearch">;
export type ScoredMemory = Item<SearchResponse["results"]>;
/** A hit's score by each signal that ranked it: `{text, words, time, vector}`, each in [0, 1]. */
export type Signals = ScoredMemory["signals"];

/** A page of a list answered as `{data, nextCursor, hasMore}`. */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
  hasMore: boolean;
}

/** The filters of `GET /v1/memories` (its query less the page). */
export type MemoryFilters = Omit<Query<"getV1Memories">, "limit" | "cursor">;
export type NewMemory = Body<"postV1Memories">;
export type MemoryVersion = Item<Response<"getV1MemoriesByIdHistory">["data"]>;
/** A change automatic formation (capture) proposed to a memory the person wrote (`GET /v1/memories/proposals`). */
export type MemoryProposal = Item<Response<"getV1MemoriesProposals">["data"]>;
/** GET /v1/memories/extract/jobs: an extraction job of a captured conversation. */
export type ExtractionJob = Item<Response<"getV1MemoriesExtractJobs">["data"]>;

export type Workspace = Item<Response<"getV1Workspaces">>;
/** What a workspace holds (`GET /v1/workspaces/:id/contents`): what a delete removes. */
export type WorkspaceContents = Response<"getV1WorkspacesByWorkspaceIdContents">;

export type DocumentSummary = Item<Response<"getV1WorkspacesByWorkspaceIdDocuments">["documents"]>;
export type DocumentWithContent = Response<"getV1WorkspacesByWorkspaceIdDocumentsByDocumentId">;
export type FullDocument = DocumentWithContent["document"];
export type NoteEntry = Item<Response<"getV1WorkspacesByWorkspaceIdNotes">>;
export type Note = Response<"getV1WorkspacesByWorkspaceIdNotesByNoteId">;

export type Thread = Item<Response<"getV1WorkspacesByWorkspaceIdChats">>;
export type Message = Item<Response<"getV1WorkspacesByWorkspaceIdChatsByThreadIdMessages">>;

export type FileInfo = Response<"putV1WorkspacesByWorkspaceIdFilesByKey">;
export type UploadUrl = Response<"postV1WorkspacesByWorkspaceIdFilesUploadUrl">;

/** An edge of `GET …/graph/block-edges` when the server derived them (an array); the app reads only these fields. */
export interface BlockEdge {
  type: string;
  from: { documentId: string; blockId: string };
  to: { documentId: string | null; blockId: string | null };
  target: string;
}

export type ApiKey = Item<Response<"getV1Keys">["data"]>;
/** A new key: `key` is the secret, shown once. */
export type CreatedKey = Response<"postV1Keys">;

export type Usage = Response<"getV1Usage">;
export type Credits = Response<"getV1Credits">;
export type DailyUsage = Response<"getV1UsageDaily">;

/** GET /health with the app's session: the user's own backlog; the server's details only for an operator's credential. */
export type Health = Response<"getHealth">;
