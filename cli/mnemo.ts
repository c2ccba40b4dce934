#!/usr/bin/env bun
import chalk from "chalk";
import { Command, CommanderError } from "commander";
import { registerDevTokenCommand } from "./commands/dev-token";
import { registerKeysCommand } from "./commands/keys";
import { registerModelsCommand } from "./commands/models";
import { registerReindexCommand } from "./commands/reindex";
import { registerServeCommand } from "./commands/serve";
import { CliError } from "./output";

/** The `mnemo` command line: the only entry point that starts servers or touches the terminal. */
export function buildProgram(): Command {
  const program = new Command("mnemo")
    .description("Mnemo: a local-first knowledge and memory server")
    .version("0.1.0")
    .showHelpAfterError()
    .exitOverride();
  registerServeCommand(program);
  registerKeysCommand(program);
  registerDevTokenCommand(program);
  registerReindexCommand(program);
  registerModelsCommand(program);
  return program;
}

if (import.meta.main) {
  try {
    await buildProgram().parseAsync(process.argv);
  } catch (error) {
    if (error instanceof CommanderError) process.exit(error.exitCode);
    const message = error instanceof CliError ? error.message : `unexpected error: ${(error as Error).stack ?? error}`;
    process.stderr.write(chalk.red(`mnemo: ${message}`) + "\n");
    process.exit(error instanceof CliError ? error.exitCode : 1);
  }
}
