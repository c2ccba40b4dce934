import chalk from "chalk";
import type { Command } from "commander";
import { CliError, printJson } from "../output";

const MARK = { ok: chalk.green("✔"), warn: chalk.yellow("!"), fail: chalk.red("✘"), skip: chalk.dim("-") };
const PAINT = { ok: chalk.green, warn: chalk.yellow, fail: chalk.red, skip: chalk.dim };

/** `mnemo doctor`: one line per check, green, yellow or red with a hint; exit 1 on any red. */
export function registerDoctorCommand(program: Command): void {
  program
    .command("doctor")
    .description(
      "check the data dir (and that only its owner can read it), disk, store of record, index lag, model, upstream, master key, index writer, memory duplicates and extraction jobs",
    )
    .option("--data <dir>", "data directory")
    .option("--json", "machine-readable output")
    .addHelpText(
      "after",
      `
Checks: data dir, data dir permissions (yellow when other users can read or change anything in it:
the paths and the chmod that fixes them are named), free disk (≥ 1 GB), store of record (SQLite integrity_check, or PostgreSQL answers),
index lag (changes waiting in the outbox; red when the writer reports failing index writes,
yellow when the oldest waits over 30 s), index writer (the lease holder; with PostgreSQL a replica
must hold it), embedding model (files present, or the embeddings API answers), upstream gateway
(LLM_GATEWAY_URL answers), master key (SERVER_MASTER_KEY or <data>/master.key), memory duplicates
(yellow when memories of one user and workspace say the same in other words: the same words in any
order, punctuation and case aside; --json lists their ids), memory extraction (yellow while an extraction
job of a captured conversation is retrying after a failed attempt or has failed, with the latest
error; users see and retry theirs with mnemo memories jobs).

Exit codes: 0 nothing red (yellow warnings allowed), 1 at least one check failed.

Example:
  mnemo doctor --data ~/.mnemo`,
    )
    .action(async (options: { data?: string; json?: boolean }) => {
      const { loadConfig } = await import("../../src/config");
      let config: ReturnType<typeof loadConfig>;
      try {
        config = loadConfig({ dataDir: options.data, logLevel: "warn" });
      } catch (error) {
        throw new CliError((error as Error).message);
      }
      const { runChecks } = await import("../../src/transfer/doctor");
      const { allMigrations } = await import("../../src/migrations");
      const checks = await runChecks(config, allMigrations.length);
      const ok = checks.every((check) => check.status !== "fail");
      if (options.json) printJson({ ok, checks });
      else {
        const width = Math.max(...checks.map((check) => check.name.length));
        for (const check of checks) {
          const hint = check.hint ? chalk.dim(` → ${check.hint}`) : "";
          process.stdout.write(
            `${MARK[check.status]} ${PAINT[check.status](check.name.padEnd(width))}  ${check.detail}${hint}\n`,
          );
        }
      }
      if (!ok) process.exitCode = 1;
    });
}
