import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { ALL, type McpServices } from "./context";
import type { Logger } from "../lib/log";
import { createMcpServer, sendErrorsUnprefixed } from "./server";

/**
 * Stdout carries protocol messages only: anything a library prints with `console.log`
 * (model downloads, warnings) goes to stderr instead. The transport writes to
 * `process.stdout` directly and is not affected.
 */
export function keepStdoutForProtocol(): void {
  const toStderr = (...args: unknown[]) => console.error(...args);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
}

/**
 * Serves MCP over stdin/stdout for one local user until stdin closes (the assistant quit)
 * or `stop` is called. The user who can start the process can read the data dir: every
 * scope is theirs.
 */
export async function serveStdio(options: {
  services: McpServices;
  log: Logger;
  userId: string;
  workspaceId?: string;
}): Promise<{ closed: Promise<void>; stop(): Promise<void> }> {
  const server = createMcpServer({
    services: options.services,
    log: options.log,
    principal: { userId: options.userId, defaultWorkspaceId: options.workspaceId, via: "stdio", scopesOf: () => ALL },
  });
  const transport = new StdioServerTransport();
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  transport.onclose = () => resolveClosed();
  // The SDK's stdio transport does not watch for end of input; a closed stdin ends the session.
  const onEnd = () => void server.close().catch(() => resolveClosed());
  process.stdin.once("end", onEnd);
  process.stdin.once("close", onEnd);
  await server.connect(sendErrorsUnprefixed(transport));
  return {
    closed,
    async stop() {
      await server.close().catch(() => {});
      resolveClosed();
    },
  };
}
