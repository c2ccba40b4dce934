#!/usr/bin/env bun
import chalk from "chalk";
import { Command, CommanderError } from "commander";
import { registerBackupCommands } from "./commands/backup";
import { registerDevTokenCommand } from "./commands/dev-token";
import { registerEscrowCommand } from "./commands/escrow";
import { registerDoctorCommand } from "./commands/doctor";
import { registerExportCommand } from "./commands/export";
import { registerImportCommand } from "./commands/import";
import { registerKeysCommand } from "./commands/keys";
import { registerMcpCommand } from "./commands/mcp";
import { registerMemoryCommands } from "./commands/memories";
import { registerModelsCommand } from "./commands/models";
import { registerOpenCommand } from "./commands/open";
import { registerPdfTextChildCommand } from "./commands/pdf-text-child";
import { registerIndexChildCommand } from "./commands/index-child";
import { registerReindexCommand } from "./commands/reindex";
import { registerServeCommand } from "./commands/serve";
import { registerUsageCommand } from "./commands/usage";
import { registerWorkspaceCommands } from "./commands/workspaces";
import { CliError, examples, expectedFailureMessage } from "./output";
import { oneLineUsageErrors } from "./usage-errors";
import { restrictNewFiles } from "../src/lib/owner-only";

/**
 * The `mnemo` command line: the only entry point that starts servers or touches the terminal.
 * One `registerXCommand(program)` per command below. A command module imports only light
 * things at its top (commander, cli/output, constants); the server, services, LanceDB,
 * onnxruntime and the store are `await import()`ed inside its action, so `--help`, `keys`
 * and `dev-token` start in ~15 ms from the binary (test/cli-startup.test.ts checks this).
 */
export function buildProgram(): Command {
  const program = new Command("mnemo")
    .description("Mnemo: a local-first knowledge and memory server")
    .version("0.1.0")
    .exitOverride()
    .addHelpText(
      "after",
      `
Every command takes --help. Settings come from the environment (MNEMO_DATA_DIR, MNEMO_PORT, …); flags override them.
${examples("mnemo serve", "mnemo open --user alice", 'mnemo remember "Alice prefers green tea" --user alice', "mnemo recall tea --user alice", "mnemo doctor")}`,
    );
  registerServeCommand(program);
  registerOpenCommand(program);
  registerKeysCommand(program);
  registerMemoryCommands(program);
  registerWorkspaceCommands(program);
  registerDevTokenCommand(program);
  registerEscrowCommand(program);
  registerReindexCommand(program);
  registerModelsCommand(program);
  registerMcpCommand(program);
  registerImportCommand(program);
  registerExportCommand(program);
  registerBackupCommands(program);
  registerDoctorCommand(program);
  registerUsageCommand(program);
  registerPdfTextChildCommand(program);
  registerIndexChildCommand(program);
  return program;
}

/** A failed command ends by itself; should a handle keep it alive, it exits after this long anyway. */
const EXIT_GRACE_MS = 5_000;

/** Output into a closed pipe (`mnemo memories list | head -3`): the reader has what it wanted. */
const isClosedPipe = (error: unknown) => (error as NodeJS.ErrnoException | null)?.code === "EPIPE";

if (import.meta.main) {
  // chalk colours only a terminal; NO_COLOR (no-color.org) turns colours off there too.
  if (process.env.NO_COLOR) chalk.level = 0;
  // Data dirs, databases, indexes, keys, backups and exports: readable by their user only.
  restrictNewFiles();
  // A closed pipe ends the command quietly, as `head` expects, wherever the write was.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error) => {
      if (!isClosedPipe(error)) throw error;
      process.exit(0);
    });
  }
  const program = buildProgram();
  const usage = oneLineUsageErrors(program);
  try {
    await program.parseAsync(process.argv);
  } catch (error) {
    if (isClosedPipe(error)) process.exit(0);
    if (error instanceof CommanderError) {
      const line = usage.messageFor(error);
      if (line) process.stderr.write(`${chalk.red(`mnemo: ${line}`)}\n`);
      process.exit(error.exitCode);
    }
    // Expected failures (our refusals, a bad configuration, a path or port refused) are one line; anything else is a bug, with its stack.
    const message = expectedFailureMessage(error) ?? `unexpected error: ${(error as Error).stack ?? error}`;
    process.stderr.write(`${chalk.red(`mnemo: ${message}`)}\n`);
    // Ending by itself, not by process.exit, lets LanceDB's native objects be dropped (each removes
    // the temp dir it made); should a handle stay open, the process exits after EXIT_GRACE_MS anyway.
    const exitCode = error instanceof CliError ? error.exitCode : 1;
    process.exitCode = exitCode;
    setTimeout(() => process.exit(exitCode), EXIT_GRACE_MS).unref();
  }
}
