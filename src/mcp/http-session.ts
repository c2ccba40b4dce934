/**
 * Opens one MCP session over Streamable HTTP: the MCP server with its tools, and the SDK's
 * transport. Everything of the MCP SDK (and zod, ajv with it) is reached from here and from
 * the stdio entry only, so `src/mcp/index.ts` imports this file on the first `/mcp` request:
 * the server starts without them (test/startup-modules.test.ts).
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Principal } from "../auth/service";
import type { Logger } from "../lib/log";
import { scopesFromAuthInfo, type McpServices } from "./context";
import { createMcpServer, sendErrorsUnprefixed } from "./server";
import type { SessionRegistry } from "./sessions";

/** What the SDK's transport is given as the request's credential. */
export type McpAuthInfo = { token: string; clientId: string; scopes: string[]; extra: { userId: string } };

/**
 * Answers a request that names no session: an initialize request opens one (kept in
 * `sessions`), anything else is answered by a throwaway server and leaves nothing behind.
 */
export async function openSession(
  deps: { services: McpServices; sessions: SessionRegistry; log: Logger; maxMessageBytes: number },
  request: Request,
  principal: Principal,
  authInfo: McpAuthInfo,
): Promise<Response> {
  const { services, sessions, log } = deps;
  const server = createMcpServer({
    services,
    log,
    principal: { userId: principal.userId, via: "http", scopesOf: scopesFromAuthInfo },
  });
  const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => crypto.randomUUID(),
    enableJsonResponse: true,
    maxRequestBodySize: deps.maxMessageBytes,
    onsessioninitialized: (id) => sessions.add({ id, userId: principal.userId, server, transport }),
    onsessionclosed: (id) => sessions.forget(id),
  });
  transport.onclose = () => transport.sessionId && sessions.forget(transport.sessionId);
  await server.connect(sendErrorsUnprefixed(transport));
  const response = await transport.handleRequest(request, { authInfo });
  // Anything but an initialize request leaves no session: nothing to keep.
  if (!transport.sessionId) await server.close().catch(() => {});
  return response;
}
