import chalk from "chalk";
import type { Command } from "commander";
import { CliError, printJson, progressBar } from "../output";

/** Problems printed one per line before the summary; the rest are counted. */
const SHOWN_PROBLEMS = 50;

/**
 * `mnemo import FILE|DIR --user ID`: memories from JSON/JSONL (a Mnemo export, mem0's
 * export or `get_all` output, Supermemory's export, `{content}` lines) or a folder of
 * Markdown files, written straight to the store of record in batched transactions (no
 * HTTP) with outbox rows for the search index.
 */
export function registerImportCommand(program: Command): void {
  program
    .command("import")
    .description("import memories (JSON/JSONL) or a Markdown folder for a user")
    .argument("<path>", "a .json/.jsonl file, or a folder of .md files (an Obsidian vault)")
    .requiredOption("--user <id>", "the user the data is imported for")
    .option("--workspace <id>", "put memories (or the Markdown documents) in this workspace; created when missing")
    .option("--data <dir>", "data directory")
    .option("--json", "print the summary as JSON")
    .addHelpText(
      "after",
      `
Formats (detected from the content):
  Mnemo export (mnemo export)    JSONL, restores ids and timestamps
  mem0 export                    {"memories": [{"memory", "metadata", "created_at", …}]}
  mem0 get_all                   [{"id", "memory", …}] or {"results": […]}
  Supermemory export             {"documents"|"memories": [{"content", "containerTags", …}]}
  plain lines                    one {"content": "…", "metadata": {…}} per line
  a folder                       Markdown files: title from front-matter, first heading or file name;
                                 front-matter to metadata; [[links]] to block edges

Re-running is safe: ids come from the source (or from the content), and what exists is skipped.
Bad lines are reported with their line number; the rest are imported.

Exit codes: 0 all imported, 1 error (an empty file, one in no known format, or one that could not be read:
nothing is imported), 3 some lines were bad.

Example:
  mnemo import mem0-export.json --user alice
  mnemo import ~/Obsidian/Vault --user alice --workspace notes`,
    )
    .action(async (path: string, options: { user: string; workspace?: string; data?: string; json?: boolean }) => {
      if (!options.user.trim()) throw new CliError("--user: must not be empty");
      const { existsSync } = await import("node:fs");
      if (!existsSync(path)) throw new CliError(`${path}: no such file or folder`);
      const { openTransferStore } = await import("../../src/transfer/open");
      const { importPath } = await import("../../src/transfer/import");
      const opened = await openTransferStore(options.data, undefined, { forImport: true }).catch((error: Error) => {
        throw new CliError(error.message);
      });
      const bar = options.json ? null : progressBar("importing");
      let report;
      try {
        report = await importPath(opened, path, { userId: options.user, workspaceId: options.workspace, onProgress: (done, total) => bar?.update(done, total) });
      } catch (error) {
        throw new CliError((error as Error).message);
      } finally {
        bar?.finish();
        await opened.close();
      }
      if (options.json) printJson(report);
      else {
        for (const problem of report.problems.slice(0, SHOWN_PROBLEMS)) process.stderr.write(chalk.yellow(`${path}: ${problem.place}: ${problem.message}`) + "\n");
        if (report.problems.length > SHOWN_PROBLEMS) process.stderr.write(chalk.yellow(`… and ${report.problems.length - SHOWN_PROBLEMS} more problems (see --json)`) + "\n");
        const types = Object.entries(report.byType).map(([type, n]) => `${n} ${type}`).join(", ");
        process.stdout.write(
          `imported ${report.inserted} new (${types || "nothing new"}), ${report.existing} already present, ${report.failed} failed ` +
            `of ${report.read} read (${report.format}${report.workspaceId ? `, workspace ${report.workspaceId}` : ""})\n`,
        );
        if (report.queued) process.stdout.write(chalk.dim(`${report.queued} sources queued for the search index; a running server (or the next mnemo serve) indexes them\n`));
      }
      if (report.failed > 0) process.exitCode = 3;
    });
}
