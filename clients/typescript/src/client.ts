import { MnemoApi, operations } from "./generated.js";
import { paginate } from "./pagination.js";
import { Transport, type CallArgs, type ClientOptions } from "./transport.js";

type Api = MnemoApi;
type Operation = { [K in keyof Api]: Api[K] extends (...args: never[]) => unknown ? K : never }[keyof Api];
type Args<K extends Operation> = NonNullable<Parameters<Api[K]>[0]>;
/** An operation's request body. */
export type Body<K extends Operation> = Args<K> extends { body?: infer B } ? B : never;
/** An operation's query. */
export type Query<K extends Operation> = Args<K> extends { query?: infer Q } ? NonNullable<Q> : never;
/** What an operation answers. */
export type Result<K extends Operation> = Awaited<ReturnType<Api[K]>>;

export type Memory = Result<"getV1MemoriesById">;
export type MemoryVersion = Result<"getV1MemoriesByIdHistory">["data"][number];
export type SearchResults = Result<"postV1MemoriesSearch">;
export type Workspace = Result<"postV1Workspaces">;
export type FileInfo = Result<"putV1WorkspacesByWorkspaceIdFilesByKey">;

/** List filters and the page size (each page is one request; iteration asks for the next). */
type Paged<Q> = Omit<Q, "cursor" | "limit"> & { pageSize?: number };
const pageQuery = <Q extends { pageSize?: number }>({ pageSize, ...rest }: Q, cursor?: string) => ({
  ...rest,
  ...(pageSize ? { limit: String(pageSize) } : {}),
  ...(cursor ? { cursor } : {}),
});

/**
 * Mnemo's API, grouped by what it works on. `api` has every operation of the OpenAPI
 * document, one method each, for what this layer does not wrap.
 *
 * @example
 * const mnemo = new Mnemo({ baseUrl: "http://127.0.0.1:8787", apiKey: process.env.MNEMO_API_KEY });
 * await mnemo.memories.add("Ana prefers window seats", { timestamp: "2024-03-02" });
 * const { results } = await mnemo.memories.search("where does Ana sit?");
 */
export class Mnemo {
  readonly api: MnemoApi;
  private readonly transport: Transport;

  constructor(options: ClientOptions) {
    this.transport = new Transport(options);
    this.api = new MnemoApi(this.transport);
  }

  private send<K extends Operation>(operation: K, args: CallArgs) {
    return this.transport.send<Result<K>>(operations[operation], args);
  }

  readonly memories = {
    /** Stores a memory; `timestamp` (ISO 8601 or Unix seconds) says when it happened. */
    add: (content: string, options: Omit<Body<"postV1Memories">, "content"> = {}) =>
      this.api.postV1Memories({ body: { ...options, content } }),
    /** Every memory matching the filters, newest first, page by page. */
    list: (filters: Paged<Query<"getV1Memories">> = {}): AsyncGenerator<Memory> =>
      paginate((cursor) => this.send("getV1Memories", { query: pageQuery(filters, cursor) }), "data"),
    get: (id: string) => this.api.getV1MemoriesById({ path: { id } }),
    update: (id: string, changes: Body<"patchV1MemoriesById">) =>
      this.api.patchV1MemoriesById({ path: { id }, body: changes }),
    delete: (id: string) => this.api.deleteV1MemoriesById({ path: { id } }),
    /** The memory's versions, oldest first, each with where it came from. */
    history: async (id: string) => (await this.api.getV1MemoriesByIdHistory({ path: { id } })).data,
    search: (query: string, options: Omit<Body<"postV1MemoriesSearch">, "query"> = {}) =>
      this.api.postV1MemoriesSearch({ body: { ...options, query } }),
    /** Extracts memories from a conversation; `dryRun` says what would change without writing. */
    extract: (body: Body<"postV1MemoriesExtract">, options: { dryRun?: boolean } = {}) =>
      this.api.postV1MemoriesExtract({ body, query: options.dryRun ? { dry_run: "true" } : {} }),
    /** The extraction jobs of captured conversations. */
    extractionJobs: async () => (await this.api.getV1MemoriesExtractJobs()).data,
    /** A failed (or retrying) extraction job, queued again now. */
    retryExtractionJob: (id: string) => this.api.postV1MemoriesExtractJobsByIdRetry({ path: { id } }),
    /** What capture proposed to change in memories the person wrote, oldest first, page by page. */
    proposals: (options: Paged<Query<"getV1MemoriesProposals">> = {}) =>
      paginate<Result<"getV1MemoriesProposals">["data"][number]>(
        (cursor) => this.send("getV1MemoriesProposals", { query: pageQuery(options, cursor) }),
        "data",
      ),
    acceptProposal: (id: string) => this.api.postV1MemoriesProposalsByIdAccept({ path: { id } }),
    rejectProposal: (id: string) => this.api.postV1MemoriesProposalsByIdReject({ path: { id } }),
  };

  readonly context = {
    /** The memories (and documents) that fit a query, ranked and joined into `contextText`. */
    build: (query: string, options: Omit<Body<"postV1ContextBuild">, "query"> = {}) =>
      this.api.postV1ContextBuild({ body: { ...options, query } }),
  };

  readonly workspaces = {
    create: (name: string) => this.api.postV1Workspaces({ body: { name } }),
    list: (options: Paged<Query<"getV1Workspaces">> = {}): AsyncGenerator<Workspace> =>
      paginate((cursor) => this.send("getV1Workspaces", { query: pageQuery(options, cursor) })),
    get: async (workspaceId: string) =>
      (await this.api.getV1WorkspacesByWorkspaceId({ path: { workspaceId } })).workspace,
    rename: async (workspaceId: string, name: string) =>
      (await this.api.patchV1WorkspacesByWorkspaceId({ path: { workspaceId }, body: { name } })).workspace,
    /** Deletes the workspace and everything in it, for good. */
    delete: (workspaceId: string) => this.api.deleteV1WorkspacesByWorkspaceId({ path: { workspaceId } }),
  };

  /** What lives in one workspace: documents, notes, chats and files. */
  workspace(workspaceId: string): WorkspaceClient {
    return new WorkspaceClient(this.api, this.transport, workspaceId);
  }

  readonly keys = {
    list: async () => (await this.api.getV1Keys()).data,
    /** A new API key; its secret (`key`) is in this answer only. */
    create: (name: string, scopes?: Body<"postV1Keys">["scopes"]) =>
      this.api.postV1Keys({ body: { name, ...(scopes ? { scopes } : {}) } }),
    revoke: (id: string) => this.api.deleteV1KeysById({ path: { id } }),
  };

  readonly usage = {
    month: () => this.api.getV1Usage(),
    daily: () => this.api.getV1UsageDaily(),
    credits: () => this.api.getV1Credits(),
  };
}

/** One workspace's documents, notes, chats and files (`mnemo.workspace(id)`). */
export class WorkspaceClient {
  constructor(
    private readonly api: MnemoApi,
    private readonly transport: Transport,
    readonly workspaceId: string,
  ) {}

  private send<K extends Operation>(operation: K, args: CallArgs) {
    return this.transport.send<Result<K>>(operations[operation], args);
  }

  private get path() {
    return { workspaceId: this.workspaceId };
  }

  readonly documents = {
    create: (body: Body<"postV1WorkspacesByWorkspaceIdDocuments">) =>
      this.api.postV1WorkspacesByWorkspaceIdDocuments({ path: this.path, body }),
    list: (options: Paged<Query<"getV1WorkspacesByWorkspaceIdDocuments">> = {}) =>
      paginate<Result<"getV1WorkspacesByWorkspaceIdDocuments">["documents"][number]>(
        (cursor) =>
          this.send("getV1WorkspacesByWorkspaceIdDocuments", { path: this.path, query: pageQuery(options, cursor) }),
        "documents",
      ),
    get: (documentId: string) =>
      this.api.getV1WorkspacesByWorkspaceIdDocumentsByDocumentId({ path: { ...this.path, documentId } }),
    update: (documentId: string, body: Body<"putV1WorkspacesByWorkspaceIdDocumentsByDocumentId">) =>
      this.api.putV1WorkspacesByWorkspaceIdDocumentsByDocumentId({ path: { ...this.path, documentId }, body }),
    delete: (documentId: string) =>
      this.api.deleteV1WorkspacesByWorkspaceIdDocumentsByDocumentId({ path: { ...this.path, documentId } }),
  };

  readonly notes = {
    create: (body: Body<"postV1WorkspacesByWorkspaceIdNotes">) =>
      this.api.postV1WorkspacesByWorkspaceIdNotes({ path: this.path, body }),
    list: (options: Paged<Query<"getV1WorkspacesByWorkspaceIdNotes">> = {}) =>
      paginate<Result<"getV1WorkspacesByWorkspaceIdNotes">[number]>((cursor) =>
        this.send("getV1WorkspacesByWorkspaceIdNotes", { path: this.path, query: pageQuery(options, cursor) }),
      ),
    get: (noteId: string) => this.api.getV1WorkspacesByWorkspaceIdNotesByNoteId({ path: { ...this.path, noteId } }),
    update: (noteId: string, body: Body<"patchV1WorkspacesByWorkspaceIdNotesByNoteId">) =>
      this.api.patchV1WorkspacesByWorkspaceIdNotesByNoteId({ path: { ...this.path, noteId }, body }),
    delete: (noteId: string) =>
      this.api.deleteV1WorkspacesByWorkspaceIdNotesByNoteId({ path: { ...this.path, noteId } }),
  };

  readonly chats = {
    create: (body: Body<"postV1WorkspacesByWorkspaceIdChats"> = {}) =>
      this.api.postV1WorkspacesByWorkspaceIdChats({ path: this.path, body }),
    list: (options: Paged<Query<"getV1WorkspacesByWorkspaceIdChats">> = {}) =>
      paginate<Result<"getV1WorkspacesByWorkspaceIdChats">[number]>((cursor) =>
        this.send("getV1WorkspacesByWorkspaceIdChats", { path: this.path, query: pageQuery(options, cursor) }),
      ),
    update: (threadId: string, body: Body<"patchV1WorkspacesByWorkspaceIdChatsByThreadId">) =>
      this.api.patchV1WorkspacesByWorkspaceIdChatsByThreadId({ path: { ...this.path, threadId }, body }),
    /** A thread's messages in creation order. */
    messages: (threadId: string, options: Paged<Query<"getV1WorkspacesByWorkspaceIdChatsByThreadIdMessages">> = {}) =>
      paginate<Result<"getV1WorkspacesByWorkspaceIdChatsByThreadIdMessages">[number]>((cursor) =>
        this.send("getV1WorkspacesByWorkspaceIdChatsByThreadIdMessages", {
          path: { ...this.path, threadId },
          query: pageQuery(options, cursor),
        }),
      ),
    addMessage: (threadId: string, body: Body<"postV1WorkspacesByWorkspaceIdChatsByThreadIdMessages">) =>
      this.api.postV1WorkspacesByWorkspaceIdChatsByThreadIdMessages({ path: { ...this.path, threadId }, body }),
    /** Deletes a thread with its messages. */
    delete: (threadId: string) =>
      this.api.deleteV1WorkspacesByWorkspaceIdChatsByThreadId({ path: { ...this.path, threadId } }),
  };

  readonly files = {
    /** Uploads through a presigned URL: asks for the URL, then PUTs the bytes there (no bearer: the URL is signed). */
    upload: async (filename: string, data: Uint8Array | Blob | string, contentType: string): Promise<FileInfo> => {
      const target = await this.api.postV1WorkspacesByWorkspaceIdFilesUploadUrl({
        path: this.path,
        body: { filename, contentType },
      });
      const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
      const response = await this.transport.fetchRaw(
        target.method,
        this.transport.resolve(target.url),
        bytes,
        { "content-type": contentType },
        false,
      );
      return (await response.json()) as FileInfo;
    },
    list: (options: Paged<Query<"getV1WorkspacesByWorkspaceIdFiles">> = {}) =>
      paginate<FileInfo>(
        (cursor) =>
          this.send("getV1WorkspacesByWorkspaceIdFiles", { path: this.path, query: pageQuery(options, cursor) }),
        "files",
      ),
    /** The file's bytes. */
    download: async (key: string) => new Uint8Array(await (await this.files.downloadResponse(key)).arrayBuffer()),
    /** The download as a `Response`, to stream it or send `Range` (in `headers`). */
    downloadResponse: (key: string, headers?: Record<string, string>) =>
      this.api.getV1WorkspacesByWorkspaceIdFilesByKey({ path: { ...this.path, key }, headers }),
    delete: (key: string) => this.api.deleteV1WorkspacesByWorkspaceIdFilesByKey({ path: { ...this.path, key } }),
  };
}
