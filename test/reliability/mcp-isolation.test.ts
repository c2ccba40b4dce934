/**
 * Isolation for MCP (docs/reliability.md#isolation), generated from the server's own tool and resource lists: user B's
 * MCP session presenting user A's ids in any id argument of any tool, or A's resource
 * URIs, gets an error and none of A's data; B's own calls (recall, search, context,
 * listings, resources/list) never show A's marker or ids. Skipped while no /mcp route
 * exists.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connectMcpHttp } from "../helpers/mcp";
import { startTestServer, type TestServer } from "../helpers/server";
import { figure } from "./lib/mode";
import { loadOperations, minimalBody, type Operation } from "./lib/openapi";
import { leakIn, ownerView, seedTenant, waitForIndex, type Tenant } from "./lib/tenant";

/** Tool arguments that name an owned record, and which tenant id they take. */
const ID_ARGUMENTS: Record<string, string> = {
  workspace_id: "workspaceId",
  workspaceId: "workspaceId",
  document_id: "documentId",
  documentId: "documentId",
  memory_id: "memoryId",
  memoryId: "memoryId",
  id: "memoryId",
  thread_id: "threadId",
  threadId: "threadId",
  parent_id: "messageId",
  parentId: "messageId",
  file_id: "fileId",
  fileId: "fileId",
  note_id: "noteId",
};
/** Id-shaped arguments that are free labels, not owned records. */
const LABELS = ["session_id", "sessionId"];
const looksLikeId = (name: string) => /(^id$|_id$|Id$)/.test(name) && !LABELS.includes(name);

let server: TestServer;
let hasMcp = false;
let operations: Operation[];
let alice: Tenant;
let bob: Tenant;

const connect = async (token: string): Promise<Client> =>
  (await connectMcpHttp(server.url, token, "reliability")).client;

beforeAll(async () => {
  server = await startTestServer();
  operations = await loadOperations(server.url);
  hasMcp = operations.some((op) => op.path === "/mcp" && op.method === "POST" && !op.pending);
  alice = await seedTenant(server.call, "mcp-alice");
  bob = await seedTenant(server.call, "mcp-bob");
  await waitForIndex(server.call, alice);
});
afterAll(() => server?.destroy());

describe("MCP isolation (generated from tools/list and resources/templates/list)", () => {
  test("B's session with A's ids gets errors, and nothing of A's in any of B's results", async () => {
    if (!hasMcp) return console.log("no /mcp route on this server: MCP isolation skipped");
    const client = await connect(bob.token);
    const seen: Array<{ what: string; sent: string; error: boolean; body: unknown }> = [];
    const before = await ownerView(server.call, operations, alice);
    const failures: string[] = [];
    try {
      const { tools } = await client.listTools();
      for (const tool of tools) {
        const properties = Object.keys((tool.inputSchema as any).properties ?? {});
        const unknownIds = properties.filter((p) => looksLikeId(p) && !(p in ID_ARGUMENTS));
        if (unknownIds.length)
          failures.push(
            `tool ${tool.name}: id argument(s) ${unknownIds.join(", ")} have no fixture: add them to ID_ARGUMENTS`,
          );
        const idArgs = properties.filter((p) => p in ID_ARGUMENTS);
        const base = (owner: Tenant) => ({
          ...(minimalBody(tool.inputSchema as any, {
            query: alice.marker,
            content: `probe ${bob.marker}`,
            title: "probe",
            role: "user",
            markdown: `probe ${bob.marker}`,
          }) as object),
          ...Object.fromEntries(idArgs.map((p) => [p, owner.ids[ID_ARGUMENTS[p]]]).filter(([, v]) => v !== undefined)),
        });
        // Each id argument alone set to A's, the rest B's own: every check must hold on its own.
        for (const arg of idArgs) {
          if (alice.ids[ID_ARGUMENTS[arg]] === undefined) continue;
          const args = { ...base(bob), [arg]: alice.ids[ID_ARGUMENTS[arg]] };
          const result = await client
            .callTool({ name: tool.name, arguments: args })
            .catch((error: Error) => ({ isError: true, content: [{ type: "text", text: error.message }] }));
          // Success is allowed only where ids are per user (a write creating B's own record
          // under that id); A's records are compared before and after, below.
          seen.push({
            what: `tool ${tool.name} ${arg}=A's`,
            sent: JSON.stringify(args),
            error: !!result.isError,
            body: result,
          });
        }
        // B's own call (searches look for A's marker).
        const own = base(bob);
        const result = await client
          .callTool({ name: tool.name, arguments: own })
          .catch((error: Error) => ({ content: [{ type: "text", text: error.message }] }));
        seen.push({
          what: `tool ${tool.name} (own)`,
          sent: JSON.stringify(own),
          error: !!(result as { isError?: boolean }).isError,
          body: result,
        });
      }
      const resources = await client.listResources().catch(() => ({ resources: [] }));
      seen.push({ what: "resources/list", sent: "", error: false, body: resources });
      const templates = await client.listResourceTemplates().catch(() => ({ resourceTemplates: [] }));
      for (const template of templates.resourceTemplates) {
        const uri = template.uriTemplate.replace(
          /\{([^}]+)\}/g,
          (_, name: string) => alice.ids[name] ?? `missing-${name}`,
        );
        const read = await client.readResource({ uri }).then(
          (ok) => ({ ok: true, body: ok }),
          (error: Error) => ({ ok: false, body: error.message }),
        );
        seen.push({ what: `resource ${uri}`, sent: uri, error: !read.ok, body: read.body });
        if (read.ok) failures.push(`resource ${uri} (A's) was readable by B`);
      }
    } finally {
      await client.close();
    }
    const leaks = seen
      .map(({ what, sent, error, body }) => [what, leakIn(alice, body, sent, error)])
      .filter(([, leak]) => leak);
    figure(
      "mcp-isolation",
      `${seen.length} MCP calls by B scanned, ${failures.length} failures, ${leaks.length} leaks`,
    );
    expect(failures).toEqual([]);
    expect(leaks).toEqual([]);
    expect(await ownerView(server.call, operations, alice)).toEqual(before);
  });
});
