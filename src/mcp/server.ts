import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { McpContext } from "./context";
import { registerPrompts, registerResources } from "./resources";
import { registerTools } from "./tools";

export const MCP_SERVER_INFO = { name: "mnemo", version: "0.1.0" } as const;

const INSTRUCTIONS =
  "Mnemo is the user's long-term memory. Recall or build_context before answering when past knowledge may matter; remember lasting facts " +
  "the user shares; forget what becomes wrong. The prompt 'use-memory' has the details.";

/**
 * One MCP server (one per session): tools, resources and the prompt, acting for one
 * principal through the same services as the REST routes.
 */
export function createMcpServer(ctx: McpContext): McpServer {
  const server = new McpServer(MCP_SERVER_INFO, { instructions: INSTRUCTIONS });
  registerTools(server, ctx);
  registerResources(server, ctx);
  registerPrompts(server);
  reportSdkToolErrorsAsErrorBodies(server);
  return server;
}

const SDK_ERROR = /^MCP error (-?\d+): ([\s\S]*)$/;

/**
 * Our tools answer failures with the REST error body as text (`{"error":{"code","message"}}`).
 * The SDK answers the failures it detects itself (arguments that fail the input schema, an
 * unknown tool) with a bare message; this gives them the same shape, `invalid_request` for
 * invalid parameters. It hooks the SDK's one funnel for tool errors, a private method
 * (SDK 1.32): if a later SDK renames it, those messages stay bare text and the tests say so.
 */
function reportSdkToolErrorsAsErrorBodies(server: McpServer): void {
  const sdk = server as unknown as { createToolError?: (message: string) => CallToolResult };
  const base = sdk.createToolError?.bind(server);
  if (!base) return;
  sdk.createToolError = (message: string) => {
    const match = SDK_ERROR.exec(message);
    if (!match) return base(message);
    const code = Number(match[1]) === ErrorCode.InvalidParams ? "invalid_request" : "error";
    return base(JSON.stringify({ error: { code, message: match[2] } }));
  };
}

const PREFIXED = /^MCP error -?\d+: /;

/**
 * The SDK's `McpError` writes "MCP error <code>: " into its message, and the SDK sends that
 * message as the JSON-RPC error's; a client (the SDK's own included) adds the prefix again
 * on receipt: "MCP error -32002: MCP error -32002: …". Errors leave this transport without
 * it (the code travels beside the message), ours and the SDK's alike.
 */
export function sendErrorsUnprefixed<T extends Transport>(transport: T): T {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const error = "error" in message ? message.error : undefined;
    if (error && typeof error.message === "string" && PREFIXED.test(error.message)) {
      return send({ ...message, error: { ...error, message: error.message.replace(PREFIXED, "") } }, options);
    }
    return send(message, options);
  };
  return transport;
}
