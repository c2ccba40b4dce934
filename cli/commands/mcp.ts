import type { Command } from "commander";
import { CliError, examples } from "../output";

const USER_ID = /^[^\s]{1,256}$/;
/** How long a finished session may take to end by itself before it is made to. */
const EXIT_GRACE_MS = 2_000;

/**
 * `mnemo mcp`: an MCP server on stdin/stdout for a desktop assistant that starts it as a
 * subprocess. It opens the same data dir (or PostgreSQL database) as `mnemo serve` and may
 * run beside it: the index writer lease stays with whoever holds it, and this process's
 * writes reach the index through the outbox either way. Stdout carries protocol messages
 * only; logs go to stderr.
 */
export function registerMcpCommand(program: Command): void {
  program
    .command("mcp")
    .description(
      "serve the Model Context Protocol on stdin/stdout for one user (for Claude Desktop and other MCP clients)",
    )
    .requiredOption("--user <id>", "the user whose memories the assistant reads and writes")
    .option("--data <dir>", "data directory (default: MNEMO_DATA_DIR or ~/.mnemo)")
    .option("--workspace <id>", "default workspace for the tools that take one")
    .addHelpText(
      "after",
      `
An MCP client starts this command itself; in Claude Desktop's claude_desktop_config.json:
  {"mcpServers": {"mnemo": {"command": "mnemo", "args": ["mcp", "--user", "alice"]}}}
${examples("mnemo mcp --user alice --workspace notes")}`,
    )
    .action(async (options: { user: string; data?: string; workspace?: string }) => {
      if (!USER_ID.test(options.user)) throw new CliError("--user: must be 1 to 256 characters without spaces");
      // Loaded here, not at the top: `mnemo --help` stays fast, and nothing is printed before the transport owns stdout.
      const { keepStdoutForProtocol, serveStdio } = await import("../../src/mcp/stdio");
      keepStdoutForProtocol();
      const { loadConfig } = await import("../../src/config");
      const { openServices } = await import("../../src/compose");
      let config: ReturnType<typeof loadConfig>;
      try {
        config = loadConfig({ dataDir: options.data, logLevel: "warn" });
      } catch (error) {
        throw new CliError((error as Error).message);
      }
      const services = await openServices(config);
      try {
        if (options.workspace) {
          await services.workspaces.requireOwned(options.user, options.workspace).catch(() => {
            throw new CliError(`--workspace: workspace '${options.workspace}' not found for user '${options.user}'`);
          });
        }
        const session = await serveStdio({
          services,
          log: services.log,
          userId: options.user,
          workspaceId: options.workspace,
        });
        const stop = () => void session.stop();
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
        await session.closed;
      } finally {
        await services.close();
      }
      // Ending by itself lets LanceDB's Session remove its .tmpXXXXXX dir from $TMPDIR (process.exit
      // would not); a handle still open must not keep a finished session alive, so exit soon anyway.
      process.exitCode = 0;
      setTimeout(() => process.exit(0), EXIT_GRACE_MS).unref();
    });
}
