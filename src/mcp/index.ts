import type { AuthService, Principal } from "../auth/service";
import type { Logger } from "../lib/log";
import { errorDocs } from "../shared/error-body";
import { createRouter } from "../lib/router";
import type { McpServices } from "./context";
import type { McpAuthInfo } from "./http-session";
import type { SessionRegistry } from "./sessions";

const MB = 1024 * 1024;
/** A JSON-RPC message carrying the largest document write (20 MB, DOCUMENT_BODY_LIMIT in documents/model.ts) and its envelope. */
const MAX_MESSAGE_BYTES = 21 * MB;

const rpcDoc = (description: string) => ({
  description,
  content: { "application/json": { schema: { type: "object" as const, description: "A JSON-RPC 2.0 message" } } },
});
const rpcError = (status: number, code: number, message: string, headers: Record<string, string> = {}) =>
  Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers });

/**
 * Streamable HTTP at `/mcp` (MCP revision 2025-06-18 and later), with the REST API's bearer
 * tokens. Every request is authenticated; a session belongs to the user that opened it, and
 * its id presented by anyone else is a 404. The scopes checked by a tool are those of the
 * request's own credential.
 *
 * Responses are JSON (no SSE on POST), and `GET /mcp` answers 405 as the transport allows:
 * this server never sends unsolicited messages, and an idle SSE stream would only hold a
 * connection (and delay shutdown, which waits for in-flight requests).
 *
 * The sessions live in a registry the composition root owns (compose.ts), bounded per user
 * and in all, and closed with its sweeper when the server stops.
 *
 * The MCP SDK (with zod and ajv, ~100 ms of a start) is imported by the first request that
 * opens a session (`./http-session`), not when the routes are built.
 */
export function mcpRoutes(deps: { auth: AuthService; services: McpServices; sessions: SessionRegistry; log: Logger }) {
  const { auth, services, sessions, log } = deps;

  const authInfo = (p: Principal): McpAuthInfo => ({
    token: "",
    clientId: p.keyId ?? p.userId,
    scopes: [...p.scopes],
    extra: { userId: p.userId },
  });

  async function openSession(request: Request, principal: Principal): Promise<Response> {
    const session = await import("./http-session");
    return session.openSession(
      { services, sessions, log, maxMessageBytes: MAX_MESSAGE_BYTES },
      request,
      principal,
      authInfo(principal),
    );
  }

  async function handle(request: Request): Promise<Response> {
    const principal = await auth.authenticate(request.headers.get("authorization"));
    const sessionId = request.headers.get("mcp-session-id");
    if (request.method === "GET") {
      return rpcError(
        405,
        -32000,
        "Method not allowed: this server offers no SSE stream; POST requests answer in JSON",
        { allow: "POST, DELETE" },
      );
    }
    if (!sessionId) return openSession(request, principal);
    const session = sessions.find(sessionId, principal.userId);
    if (!session) return rpcError(404, -32001, "Session not found");
    return session.transport.handleRequest(request, { authInfo: authInfo(principal) });
  }

  return createRouter()
    .post("/mcp", ({ request }) => handle(request), {
      detail: {
        tags: ["mcp"],
        summary: "MCP Streamable HTTP: a JSON-RPC message (initialize opens a session)",
        responses: {
          200: rpcDoc("The JSON-RPC response; `Mcp-Session-Id` after initialize"),
          202: { description: "A notification or response was accepted" },
          404: rpcDoc("Unknown session, or another principal's"),
          ...errorDocs([401, 403]),
        },
      },
    })
    .get("/mcp", ({ request }) => handle(request), {
      detail: {
        tags: ["mcp"],
        summary: "MCP: no SSE stream here (405 after authentication)",
        responses: { 405: rpcDoc("This server offers no SSE stream"), ...errorDocs([401]) },
      },
    })
    .delete("/mcp", ({ request }) => handle(request), {
      detail: {
        tags: ["mcp"],
        summary: "MCP: close the session named by Mcp-Session-Id",
        responses: {
          200: { description: "Session closed" },
          404: rpcDoc("Unknown session, or another principal's"),
          ...errorDocs([401]),
        },
      },
    });
}
