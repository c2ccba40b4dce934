import chalk from "chalk";
import type { Command } from "commander";
import { existsSync, rmSync } from "node:fs";
import { CliError, examples } from "../output";
import { appBaseUrl } from "./open";

/** A stopped server ends by itself; should a handle keep it alive, it exits after this long anyway. */
const EXIT_GRACE_MS = 5_000;

/**
 * `mnemo serve`: the only place a server is started and signals are handled. The server
 * (Elysia, LanceDB, the store) is imported inside the action so other commands never load it.
 */
export function registerServeCommand(program: Command): void {
  program
    .command("serve")
    .description("start the HTTP server")
    .option("--host <host>", "address to listen on", undefined)
    .option("--port <port>", "port to listen on (0 picks a free one)", undefined)
    .option("--data <dir>", "data directory (default: MNEMO_DATA_DIR or ~/.mnemo)")
    .option(
      "--allow-mock-tokens",
      "accept mock-token-<uid> bearer tokens (local testing only; loopback addresses and origins only)",
    )
    .option(
      "--allow-public-mock-tokens",
      "with --allow-mock-tokens: listen on a non-loopback --host anyway (anyone reaching it can act as any user)",
    )
    .addHelpText(
      "after",
      `
Settings come from the environment (MNEMO_HOST, MNEMO_PORT, MNEMO_DATA_DIR, MNEMO_DATABASE_URL, …); flags override them.
Stops on SIGINT or SIGTERM after in-flight requests finish.

Mock tokens (mock-token-<uid>) let anyone act as any user. With --allow-mock-tokens the server
listens only on a loopback address (127.0.0.1, ::1, localhost) unless --allow-public-mock-tokens
(MNEMO_ALLOW_PUBLIC_MOCK_TOKENS=1) is given, answers browser pages only from this machine
(http://localhost, 127.0.0.1, [::1], any port), and refuses requests whose Host is not a loopback
name, the --host address or MNEMO_PUBLIC_URL's host (a page using DNS rebinding); on 0.0.0.0,
set MNEMO_PUBLIC_URL to the address others use.
${examples("mnemo serve --port 8787 --data ~/.mnemo")}`,
    )
    .action(
      async (options: {
        host?: string;
        port?: string;
        data?: string;
        allowMockTokens?: boolean;
        allowPublicMockTokens?: boolean;
      }) => {
        const port = options.port === undefined ? undefined : Number(options.port);
        if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535))
          throw new CliError(`--port: '${options.port}' is not a port number`);
        const [{ loadConfig }, { SchemaTooNewError }, { startServer, StartRefusedError }] = await Promise.all([
          import("../../src/config"),
          import("../../src/db/migrate"),
          import("../../src/server"),
        ]);
        let config: ReturnType<typeof loadConfig>;
        try {
          config = loadConfig({
            host: options.host,
            port,
            dataDir: options.data,
            allowMockTokens: options.allowMockTokens || undefined,
            allowPublicMockTokens: options.allowPublicMockTokens || undefined,
          });
        } catch (error) {
          throw new CliError((error as Error).message);
        }
        let server: Awaited<ReturnType<typeof startServer>>;
        try {
          // What can be checked is, before the store, the data dir or a master key is created.
          const { checkDataDir, checkPortFree } = await import("../preflight");
          // With PostgreSQL the data dir holds no record (a read-only one serves, its index writes failing).
          if (!config.storage.databaseUrl) checkDataDir(config.dataDir);
          checkPortFree(config.host, config.port);
          // A data dir that was there before (an earlier version's, a copy) may be open to others; what the server creates is owner-only.
          if (existsSync(config.dataDir)) await warnIfExposed(config.dataDir);
          server = await startServer(config);
        } catch (error) {
          if (config.storage.provider === "memory") rmSync(config.dataDir, { recursive: true, force: true });
          // A store that cannot be used is the operator's to fix: said in one line (cli/output.ts), without a stack.
          if (error instanceof SchemaTooNewError || error instanceof StartRefusedError)
            throw new CliError((error as Error).message);
          throw error;
        }
        process.stdout.write(`Mnemo listening on ${server.url}\n`);
        // The app is at /app; a link from `mnemo open` signs a browser in without pasting a key.
        const openFlags = `${options.data ? ` --data ${config.dataDir}` : ""}${appBaseUrl(undefined) === server.url ? "" : ` --url ${server.url}`}`;
        process.stdout.write(`Web app: ${server.url}/app/  (sign in: mnemo open --user <id>${openFlags})\n`);
        process.stderr.write(chalk.dim(`data: ${config.dataDir}  docs: ${server.url}/openapi\n`));
        let signals = 0;
        const shutdown = async (signal: string) => {
          if (++signals > 1) process.exit(130);
          server.services.log.info("shutting down", { signal });
          await server.stop();
          // Ending by itself rather than process.exit lets LanceDB's native objects be dropped:
          // each Session removes the empty .tmpXXXXXX dir it made in $TMPDIR only then.
          process.exitCode = 0;
          setTimeout(() => process.exit(0), EXIT_GRACE_MS).unref();
        };
        process.on("SIGINT", () => void shutdown("SIGINT"));
        process.on("SIGTERM", () => void shutdown("SIGTERM"));
      },
    );
}

/** One line on stderr when other users can read or change the data dir: `mnemo doctor`'s rule (src/transfer/doctor.ts). */
async function warnIfExposed(dataDir: string): Promise<void> {
  const { permissionsCheck } = await import("../../src/transfer/doctor");
  const check = await permissionsCheck({ dataDir });
  if (check.status === "warn")
    process.stderr.write(
      `${chalk.yellow(`mnemo: warning: data dir ${dataDir} is ${check.detail}; run ${check.hint}`)}\n`,
    );
}
