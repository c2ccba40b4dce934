import { ResourceTemplate, type McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ReadResourceResult } from "@modelcontextprotocol/sdk/types.js";
import type { Workspace } from "../workspaces/model";
import { requireScopes, toMcpError, type McpContext, type ToolExtra } from "./context";
import { documentOut } from "./tools";

/** How many workspaces `resources/list` names (pages of the REST list, 200 each). */
const MAX_LISTED_WORKSPACES = 1000;
const READ = ["memory:read"] as const;

const one = (value: string | string[]) => (Array.isArray(value) ? value[0] : value);

/**
 * Resources: a memory, a document as markdown, and each workspace (listed, with its
 * documents). Reads check `memory:read` and ownership like the REST routes; another
 * user's ids answer not found.
 */
export function registerResources(server: McpServer, ctx: McpContext): void {
  const { services: s, principal: p, log } = ctx;
  const user = p.userId;

  async function read(
    where: string,
    extra: ToolExtra,
    fn: () => Promise<ReadResourceResult>,
  ): Promise<ReadResourceResult> {
    try {
      requireScopes(p, extra, READ);
      return await fn();
    } catch (error) {
      throw toMcpError(error, log, where);
    }
  }

  server.registerResource(
    "memory",
    new ResourceTemplate("mnemo://memories/{id}", { list: undefined }),
    {
      title: "A memory",
      description: "One memory as JSON (content, metadata, workspace, session)",
      mimeType: "application/json",
    },
    (uri, vars, extra) =>
      read("resource memory", extra, async () => {
        const memory = await s.memories.get(user, one(vars.id));
        return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(memory) }] };
      }),
  );

  server.registerResource(
    "document",
    new ResourceTemplate("mnemo://workspaces/{workspaceId}/documents/{documentId}", { list: undefined }),
    { title: "A document", description: "One document of a workspace, as markdown", mimeType: "text/markdown" },
    (uri, vars, extra) =>
      read("resource document", extra, async () => {
        const doc = documentOut(await s.documents.get(user, one(vars.workspaceId), one(vars.documentId)));
        return {
          contents: [
            { uri: uri.href, mimeType: "text/markdown", text: doc.markdown ? doc.markdown : `# ${doc.title}\n` },
          ],
        };
      }),
  );

  server.registerResource(
    "workspace",
    new ResourceTemplate("mnemo://workspaces/{workspaceId}", {
      list: async (extra) => {
        try {
          requireScopes(p, extra, READ);
          return {
            resources: (await listWorkspaces()).map((w) => ({
              uri: `mnemo://workspaces/${w.id}`,
              name: w.name,
              mimeType: "application/json",
            })),
          };
        } catch (error) {
          throw toMcpError(error, log, "resource list");
        }
      },
    }),
    {
      title: "A workspace",
      description: "A workspace and the first page of its documents (ids, titles, resource URIs), as JSON",
      mimeType: "application/json",
    },
    (uri, vars, extra) =>
      read("resource workspace", extra, async () => {
        const workspaceId = one(vars.workspaceId);
        const workspace = await s.workspaces.get(user, workspaceId);
        const page = await s.documents.list(user, workspaceId, undefined, { limit: "200" });
        const documents = page.items.map((d) => ({
          id: d.id,
          title: d.title,
          uri: `mnemo://workspaces/${workspaceId}/documents/${d.id}`,
          updatedAt: d.updatedAt,
        }));
        return {
          contents: [
            {
              uri: uri.href,
              mimeType: "application/json",
              text: JSON.stringify({ workspace, documents, hasMore: page.hasMore }),
            },
          ],
        };
      }),
  );

  async function listWorkspaces(): Promise<Workspace[]> {
    const all: Workspace[] = [];
    let cursor: string | undefined;
    do {
      const page = await s.workspaces.list(user, { limit: "200", cursor });
      all.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor && all.length < MAX_LISTED_WORKSPACES);
    return all.slice(0, MAX_LISTED_WORKSPACES);
  }
}

/** What `use-memory` tells a model: when to recall, when to remember, when to forget. */
export const USE_MEMORY_TEXT = `You have a long-term memory (Mnemo) through these tools.

- At the start of a task, and whenever earlier knowledge could matter, call build_context (or recall) with the user's request, and use what comes back.
- When the user states a lasting fact, preference, decision, plan or correction, call remember with one short, self-contained sentence per fact (third person, e.g. "The user prefers window seats."). Do not store secrets, passwords or one-off small talk.
- When a stored fact becomes wrong, forget the old memory (find its id with recall) and remember the new one. When the user asks you to forget something, do it and confirm.
- For longer notes, use write_document; to find what the user wrote down, search_documents, then read_document.
- Do not tell the user about these tool calls unless they ask.`;

export function registerPrompts(server: McpServer): void {
  server.registerPrompt(
    "use-memory",
    { title: "Use memory", description: "Tells the model when to remember, recall and forget with Mnemo" },
    () => ({ messages: [{ role: "user", content: { type: "text", text: USE_MEMORY_TEXT } }] }),
  );
}
