import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { Static, TObject } from "@sinclair/typebox";
import type { Scope } from "../auth/scopes";
import { AppendMessageBody, CreateThreadBody, MAX_MESSAGE_BYTES } from "../chats/model";
import { BuildContextBody } from "../context/model";
import { fromUnifiedBody } from "../documents/changes";
import { CreateDocumentBody, PatchDocumentBody } from "../documents/model";
import { toFullDocument } from "../documents/present";
import type { DocumentRow } from "../documents/record";
import { DocumentsQueryBody } from "../documents-query/model";
import { AppError, badRequest, payloadTooLarge } from "../shared/app-error";
import { ExtractBody } from "../formation/model";
import { CreateMemoryBody, SearchMemoriesBody, type MemoryProposalRecord, type MemoryRecord } from "../memories/model";
import {
  checkBody,
  proxyWriteKey,
  requireScopes,
  requireWorkspace,
  runTool,
  workspaceOf,
  type McpContext,
  type McpPrincipal,
  type McpServices,
  type ToolExtra,
} from "./context";
import * as S from "./schemas";
import { toZod, toZodShape } from "./typebox-zod";

const READ = ["memory:read"] as const;
const WRITE = ["memory:write"] as const;
/** REST's chat routes need `chat`; a writing tool also needs `memory:write`. */
const CHAT_WRITE = ["chat", "memory:write"] as const;

const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const additive = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };

/** The memory as a tool returns it: without the storage-only fields (ownerId, projectId, status). */
const memoryOut = (m: MemoryRecord) => S.pick(S.MemoryOutput, m);

export const documentOut = (row: DocumentRow) => S.pick(S.DocumentOutput, toFullDocument(row));

/** Drops undefined values, so the REST schema check sees only what was given. */
const defined = <T extends Record<string, unknown>>(o: T): T =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

/** What a tool's `run` is given besides its arguments: the services, and who it acts for. */
interface ToolCall {
  s: McpServices;
  user: string;
  p: McpPrincipal;
}

/** One tool: what a client sees (name, description, schemas, hints), the scopes it needs, and what it does. */
interface Tool<I extends TObject = TObject> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: TObject;
  annotations: ToolAnnotations;
  scopes: readonly Scope[];
  run(args: Static<I>, call: ToolCall): Promise<Record<string, unknown>>;
}
const tool = <I extends TObject>(spec: Tool<I>) => spec as unknown as Tool;

/** A proposal as a tool returns it: its memory without the storage-only fields. */
const proposalOut = (p: MemoryProposalRecord) => ({ ...p, memory: p.memory ? memoryOut(p.memory) : null });

/** The tools, each calling the same service as its REST route, with the same checks. */
export const TOOLS: Tool[] = [
  tool({
    name: "remember",
    title: "Remember",
    description:
      "Store one memory about the user or the task so it can be recalled in later conversations. Use it when the user states a lasting " +
      'fact, preference, decision or commitment ("I\'m vegetarian", "we deploy on Fridays"). Write the content as a short, self-contained ' +
      "sentence in the third person; store one fact per call. Optionally scope it to a workspace and tag it with a session_id and metadata; " +
      'give timestamp when the fact belongs to another time than now ("last May" → that date).',
    input: S.RememberInput,
    output: S.MemoryOutput,
    annotations: additive,
    scopes: WRITE,
    async run(args, { s, user, p }) {
      const body = checkBody(
        CreateMemoryBody,
        defined({
          content: args.content,
          metadata: args.metadata,
          workspace_id: workspaceOf(p, args.workspace_id),
          session_id: args.session_id,
          timestamp: args.timestamp,
        }),
      );
      return memoryOut(await s.memories.create(user, body, { kind: "mcp" }));
    },
  }),
  tool({
    name: "extract_memories",
    title: "Extract memories",
    description:
      "Learn from a conversation: the server's memory model picks out lasting facts about the user and, for each, adds a memory, updates or " +
      "deletes one it contradicts, or leaves things as they are; every change keeps its history. Use it at the end of a conversation instead " +
      "of many remember calls. dry_run answers the decisions without applying them. Uses the user's token quota.",
    input: S.ExtractMemoriesInput,
    output: S.ExtractMemoriesOutput,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    scopes: CHAT_WRITE,
    async run(args, { s, user, p }) {
      const body = checkBody(
        ExtractBody,
        defined({
          messages: args.messages.map((m) => defined(m)),
          workspace_id: workspaceOf(p, args.workspace_id),
          session_id: args.session_id,
        }),
      );
      return s.formation.extract({ userId: user, body, dryRun: args.dry_run === true });
    },
  }),
  tool({
    name: "recall",
    title: "Recall",
    description:
      "Search the user's memories by meaning and keywords; returns the best matches with a score between 0 and 1, best first. Use it at the " +
      "start of a task or whenever earlier knowledge about the user, their projects or preferences could help. Narrow with filters " +
      "(workspace_id, session_id, metadata equality) and minScore; limit defaults to 10.",
    input: S.RecallInput,
    output: S.RecallOutput,
    annotations: readOnly,
    scopes: READ,
    async run(args, { s, user }) {
      const body = checkBody(
        SearchMemoriesBody,
        defined({ query: args.query, limit: args.limit, filters: args.filters, minScore: args.minScore }),
      );
      const { response } = await s.memories.search(user, body);
      return {
        results: response.results.map((r) => ({ ...memoryOut(r), score: r.score })),
        mode: response.mode,
        strategy: response.strategy,
        signals: response.signals,
      };
    },
  }),
  tool({
    name: "build_context",
    title: "Build context",
    description:
      "Assemble the memories (and optionally document notes and files) most relevant to a query into one prompt-ready text block, " +
      "'## Relevant context' followed by one bullet per item. Use it before answering a request that may depend on what the user told you " +
      "before; put contextText into your reasoning. Scoped to workspace_id when given (memories without a workspace are included).",
    input: S.BuildContextInput,
    output: S.BuildContextOutput,
    annotations: readOnly,
    scopes: READ,
    async run(args, { s, user, p }) {
      const body = checkBody(
        BuildContextBody,
        defined({
          query: args.query,
          workspace_id: workspaceOf(p, args.workspace_id),
          limit: args.limit,
          include: args.include,
          filters: args.filters,
          minScore: args.minScore,
        }),
      );
      return await s.context.build(user, body);
    },
  }),
  tool({
    name: "forget",
    title: "Forget",
    description:
      "Delete one memory by its id, for good: it disappears from recall, context and search. Use it when the user asks you to forget " +
      "something or a stored fact is no longer true (then remember the new fact). Find the id with recall or list_memories first.",
    input: S.ForgetInput,
    output: S.ForgetOutput,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    scopes: WRITE,
    async run(args, { s, user }) {
      const { id } = await s.memories.delete(user, args.id, { kind: "mcp" });
      return { id, deleted: true as const };
    },
  }),
  tool({
    name: "list_memories",
    title: "List memories",
    description:
      "List the user's memories, newest first, one page at a time (limit default 100, at most 1000). Pass nextCursor back as cursor for " +
      "the next page. Use it to review or audit what is stored; to find memories about a topic, use recall instead.",
    input: S.ListMemoriesInput,
    output: S.ListMemoriesOutput,
    annotations: readOnly,
    scopes: READ,
    async run(args, { s, user }) {
      const page = await s.memories.list(user, {
        limit: args.limit === undefined ? undefined : String(args.limit),
        cursor: args.cursor,
      });
      return { memories: page.data.map(memoryOut), nextCursor: page.nextCursor, hasMore: page.hasMore };
    },
  }),
  tool({
    name: "list_memory_proposals",
    title: "List memory proposals",
    description:
      "List the changes automatic memory formation (conversations captured with X-Svc-Remember) proposed to memories the user wrote: " +
      "each with the memory as it is now, the proposed action (update with new text, or delete), and the thread and messages it came from. " +
      "Nothing of them is applied until the user accepts. Show them to the user and let the user decide; never accept on your own judgement.",
    input: S.ListProposalsInput,
    output: S.ListProposalsOutput,
    annotations: readOnly,
    scopes: READ,
    async run(args, { s, user }) {
      const page = await s.memories.proposals.list(user, {
        limit: args.limit === undefined ? undefined : String(args.limit),
        cursor: args.cursor,
      });
      return { proposals: page.data.map(proposalOut), nextCursor: page.nextCursor, hasMore: page.hasMore };
    },
  }),
  tool({
    name: "accept_memory_proposal",
    title: "Accept memory proposal",
    description:
      "Apply one proposal of list_memory_proposals, because the user said so: the memory is updated or deleted, its history recording " +
      "the proposal. Refused (conflict) when the memory changed since it was proposed.",
    input: S.ProposalIdInput,
    output: S.ProposalOutput,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    scopes: WRITE,
    async run(args, { s, user }) {
      return proposalOut(await s.memories.proposals.accept(user, args.id));
    },
  }),
  tool({
    name: "reject_memory_proposal",
    title: "Reject memory proposal",
    description:
      "Turn down one proposal of list_memory_proposals, because the user said so: the memory stays as it is.",
    input: S.ProposalIdInput,
    output: S.ProposalOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    scopes: WRITE,
    async run(args, { s, user }) {
      return proposalOut(await s.memories.proposals.reject(user, args.id));
    },
  }),
  tool({
    name: "search_documents",
    title: "Search documents",
    description:
      "Search the user's documents (notes, split into blocks) and chat messages, and optionally memories and files, semantic first with a " +
      "keyword fallback. Returns scored items with a snippet, the document or thread they belong to, and a contextText block. Use it to " +
      "find what the user wrote down; open a whole document with read_document.",
    input: S.SearchDocumentsInput,
    output: S.SearchDocumentsOutput,
    annotations: readOnly,
    scopes: READ,
    async run(args, { s, user, p }) {
      const body = checkBody(
        DocumentsQueryBody,
        defined({
          query: args.query,
          workspace_id: workspaceOf(p, args.workspace_id),
          top_k: args.top_k,
          include: args.include,
          minScore: args.minScore,
          filter: args.document_type === undefined ? undefined : { eq: { document_type: args.document_type } },
        }),
      );
      const { query, mode, strategy, signals, items, contextText } = await s.documentsQuery.query(user, body);
      return { query, mode, strategy, signals, items, contextText };
    },
  }),
  tool({
    name: "read_document",
    title: "Read document",
    description:
      "Read one document of a workspace in full: its title, type, metadata and content as markdown. Use it after search_documents found " +
      "a relevant block, or when the user names a document by id.",
    input: S.ReadDocumentInput,
    output: S.DocumentOutput,
    annotations: readOnly,
    scopes: READ,
    async run(args, { s, user, p }) {
      return documentOut(await s.documents.get(user, requireWorkspace(p, args.workspace_id), args.document_id));
    },
  }),
  tool({
    name: "write_document",
    title: "Write document",
    description:
      "Create a document in a workspace, or patch one: without document_id a new document is created (title required); with the id of an " +
      "existing document only the fields given change (markdown replaces the whole content, metadata_patch merges keys). The markdown is " +
      "split into blocks and becomes searchable with search_documents. Use it for longer notes; use remember for single facts.",
    input: S.WriteDocumentInput,
    output: S.WriteDocumentOutput,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    scopes: WRITE,
    async run(args, { s, user, p }) {
      const workspaceId = requireWorkspace(p, args.workspace_id);
      const fields = defined({
        title: args.title,
        markdown: args.markdown,
        document_type: args.document_type,
        metadata: args.metadata,
      });
      const existing =
        args.document_id === undefined
          ? null
          : await s.documents.get(user, workspaceId, args.document_id).catch(notFoundAsNull);
      if (existing) {
        const body = checkBody(PatchDocumentBody, defined({ ...fields, metadata_patch: args.metadata_patch }));
        const changes = { ...fromUnifiedBody(body), encryptionKey: await proxyWriteKey(s, user) };
        return {
          created: false,
          document: documentOut(await s.documents.update(user, workspaceId, existing.id, changes, "unified")),
        };
      }
      if (args.metadata_patch !== undefined)
        throw badRequest("metadata_patch: only applies to an existing document; send metadata to create one");
      if (args.title === undefined) throw badRequest("title: is required to create a document");
      const body = checkBody(CreateDocumentBody, { ...fields, title: args.title });
      const changes = { ...fromUnifiedBody(body), encryptionKey: await proxyWriteKey(s, user) };
      const { document } = await s.documents.create(user, workspaceId, args.document_id, changes, "unified");
      return { created: true, document: documentOut(document) };
    },
  }),
  tool({
    name: "append_chat_message",
    title: "Append chat message",
    description:
      "Append a message (role user or assistant) to a chat thread of a workspace, so the conversation is kept and becomes searchable with " +
      "search_documents. Without thread_id a new thread is started (titled thread_title) and its id returned: pass it on later calls.",
    input: S.AppendChatMessageInput,
    output: S.AppendChatMessageOutput,
    annotations: additive,
    scopes: CHAT_WRITE,
    async run(args, { s, user, p }) {
      const workspaceId = requireWorkspace(p, args.workspace_id);
      const message = checkBody(
        AppendMessageBody,
        defined({ role: args.role, content: args.content, parentId: args.parent_id }),
      );
      const sealWith = await proxyWriteKey(s, user);
      let threadId = args.thread_id;
      if (threadId === undefined) {
        // Checked before the thread is created, so a refused message leaves no empty thread behind.
        await s.workspaces.requireOwned(user, workspaceId);
        if (!message.content.trim()) throw badRequest("content: must not be blank");
        const size = Buffer.byteLength(message.content, "utf8");
        if (size > MAX_MESSAGE_BYTES)
          throw payloadTooLarge(`content: is ${size} bytes; the limit is ${MAX_MESSAGE_BYTES} bytes (200 KB)`);
        threadId = (
          await s.chats.create(user, workspaceId, checkBody(CreateThreadBody, defined({ title: args.thread_title })))
        ).id;
      }
      return { thread_id: threadId, ...(await s.chats.append(user, workspaceId, threadId, message, sealWith)) };
    },
  }),
];

/** Each tool's schemas as the SDK takes them, converted once (at import: an unsupported schema fails there). */
const ZOD_SCHEMAS = new Map(TOOLS.map((t) => [t.name, { input: toZodShape(t.input), output: toZod(t.output) }]));

/**
 * Registers every tool of TOOLS on a session's server: each call is checked for the
 * tool's scopes, then run, its failure answered as the REST error body (`runTool`).
 */
export function registerTools(server: McpServer, ctx: McpContext): void {
  const call: ToolCall = { s: ctx.services, user: ctx.principal.userId, p: ctx.principal };
  for (const t of TOOLS) {
    const schemas = ZOD_SCHEMAS.get(t.name)!;
    server.registerTool(
      t.name,
      {
        title: t.title,
        description: t.description,
        inputSchema: schemas.input,
        outputSchema: schemas.output,
        annotations: t.annotations,
      },
      (args: unknown, extra: ToolExtra) =>
        runTool(ctx, t.name, args, async () => {
          requireScopes(ctx.principal, extra, t.scopes);
          return t.run(args as never, call);
        }),
    );
  }
}

function notFoundAsNull(error: unknown): null {
  // A missing document is created; a missing workspace is still a 404 (create checks it again).
  if (error instanceof AppError && error.errorCode === "not_found" && !error.message.startsWith("workspace "))
    return null;
  throw error;
}
