import chalk from "chalk";
import type { Command } from "commander";
import { CliError, plural, printJson, progressBar } from "../output";
import { DRY_RUN_EXTRACT_DEFAULT, previewChatImport } from "./import-preview";

/** Problems printed one per line before the summary; the rest are counted. */
const SHOWN_PROBLEMS = 50;

/** How the summary names each format. */
const FORMAT_NAMES: Record<string, string> = {
  "mnemo-export": "Mnemo export",
  "mnemo-app-export": "Mnemo web app export",
  "mem0-export": "mem0 export",
  "mem0-get-all": "mem0 get_all",
  supermemory: "Supermemory export",
  "content-lines": "content lines",
  markdown: "Markdown folder",
  "chatgpt-export": "ChatGPT export",
  "claude-export": "Claude export",
};
/** Record types as the summary counts them (`7 memories`, `1 chat thread`). */
const TYPE_NAMES: Record<string, [string, string]> = {
  memory: ["memory", "memories"],
  chat_thread: ["chat thread", "chat threads"],
  chat_message: ["chat message", "chat messages"],
  indexed_document: ["indexed document", "indexed documents"],
  workspace_artifact: ["workspace artifact", "workspace artifacts"],
  file_block: ["file block", "file blocks"],
};
const typeCount = (type: string, n: number) => plural(n, ...(TYPE_NAMES[type] ?? [type, `${type}s`]));

/** `--limit` as a count of conversations: a whole number of at least 1. */
function parseLimit(raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new CliError(`--limit: must be a whole number of at least 1`);
  return Number(raw);
}

interface ImportOptions {
  user: string;
  workspace?: string;
  data?: string;
  json?: boolean;
  extract?: boolean;
  dryRun?: boolean;
  limit?: number;
}

/**
 * `mnemo import FILE|DIR --user ID`: memories from JSON/JSONL (a Mnemo export or the web
 * app's, mem0's export or `get_all` output, Supermemory's export, `{content}` lines), chat
 * threads from ChatGPT's or Claude's data export, or a folder of Markdown files, written
 * straight to the store of record in batched transactions (no HTTP) with outbox rows for
 * the search index.
 */
export function registerImportCommand(program: Command): void {
  program
    .command("import")
    .description("import memories (JSON/JSONL), ChatGPT or Claude conversations, or a Markdown folder for a user")
    .argument(
      "<path>",
      "a .json/.jsonl file, a ChatGPT or Claude export (.zip or conversations.json), or a folder of .md files",
    )
    .requiredOption("--user <id>", "the user the data is imported for")
    .option(
      "--workspace <id>",
      "put memories, conversations or Markdown documents in this workspace; created when missing",
    )
    .option(
      "--extract",
      "conversations: queue memory extraction from them with the configured model (a running server runs it)",
    )
    .option(
      "--dry-run",
      "conversations: write nothing; show what would be imported (with --extract, what would be remembered)",
    )
    .option(
      "--limit <n>",
      `conversations: only the first N (a dry run with --extract: ${DRY_RUN_EXTRACT_DEFAULT} unless given)`,
      parseLimit,
    )
    .option("--data <dir>", "data directory")
    .option("--json", "print the summary as JSON")
    .addHelpText(
      "after",
      `
Formats (detected from the content):
  Mnemo export (mnemo export)    JSONL, restores ids and timestamps
  Mnemo web app export           {"exportedAt", "count", "memories": […]} (Memories → Export)
  ChatGPT export                 conversations.json, or the zip (Settings → Data controls → Export data)
  Claude export                  conversations.json, or the zip (Settings → Privacy → Export data)
  mem0 export                    {"memories": [{"memory", "metadata", "created_at", …}]}
  mem0 get_all                   [{"id", "memory", …}] or {"results": […]}
  Supermemory export             {"documents"|"memories": [{"content", "containerTags", …}]}
  plain lines                    one {"content": "…", "metadata": {…}} per line
  a folder                       Markdown files: title from front-matter, first heading or file name;
                                 front-matter to metadata; [[links]] to block edges

Re-running is safe: ids come from the source (or from the content), and what exists is skipped.
Bad lines are reported with their line number; the rest are imported.
Conversations become chat threads, in --workspace or a "ChatGPT import" / "Claude import" workspace.

Exit codes: 0 all imported, 1 error (an empty file, one in no known format, or one that could not be read:
nothing is imported), 3 some lines were bad.

Examples:
  mnemo import mem0-export.json --user alice
  mnemo import ~/Obsidian/Vault --user alice --workspace notes
  mnemo import chatgpt-export.zip --user alice --dry-run --extract --limit 3
  mnemo import chatgpt-export.zip --user alice --extract`,
    )
    .action(async (path: string, options: ImportOptions) => {
      if (!options.user.trim()) throw new CliError("--user: must not be empty");
      const { existsSync, statSync } = await import("node:fs");
      if (!existsSync(path)) throw new CliError(`${path}: no such file or folder`);
      const conversationsOnly = options.extract
        ? "--extract"
        : options.dryRun
          ? "--dry-run"
          : options.limit !== undefined
            ? "--limit"
            : null;
      let conversations = null;
      if (conversationsOnly) {
        const { loadChatExport } = await import("../../src/transfer/chat-import");
        conversations = statSync(path).isDirectory()
          ? null
          : await loadChatExport(path, new Date().toISOString()).catch((error: Error) => {
              throw new CliError(error.message);
            });
        if (!conversations)
          throw new CliError(`${conversationsOnly}: applies to ChatGPT's or Claude's export; ${path} is not one`);
        if (options.dryRun) return previewChatImport(path, conversations, options);
      }
      const { openTransferStore } = await import("../../src/transfer/open");
      const { recordingOutbox } = await import("../../src/compose");
      const { importPath } = await import("../../src/transfer/import");
      const { importChatExport } = await import("../../src/transfer/chat-import");
      const opened = await openTransferStore(options.data, undefined, {
        forImport: true,
        outbox: recordingOutbox,
      }).catch((error: Error) => {
        throw new CliError(error.message);
      });
      const { encryption, completions } = opened.config;
      if (options.extract && encryption.proxyMode && !completions.extractionInProxyMode) {
        await opened.close();
        throw new CliError(
          "--extract: memory extraction is off in reverse-proxy encryption mode (its memories would be stored in plaintext); the operator enables it with MNEMO_EXTRACTION_IN_PROXY_MODE=1",
        );
      }
      const bar = options.json ? null : progressBar("importing");
      let report: Awaited<ReturnType<typeof importChatExport>> | Awaited<ReturnType<typeof importPath>>;
      try {
        const common = {
          userId: options.user,
          workspaceId: options.workspace,
          onProgress: (done: number, total: number) => bar?.update(done, total),
        };
        report = conversations
          ? await importChatExport(opened, conversations, { ...common, extract: options.extract, limit: options.limit })
          : await importPath(opened, path, common);
      } catch (error) {
        throw new CliError((error as Error).message);
      } finally {
        bar?.finish();
        await opened.close();
      }
      if (options.json) printJson(report);
      else {
        for (const problem of report.problems.slice(0, SHOWN_PROBLEMS))
          process.stderr.write(`${chalk.yellow(`${path}: ${problem.place}: ${problem.message}`)}\n`);
        if (report.problems.length > SHOWN_PROBLEMS)
          process.stderr.write(
            `${chalk.yellow(`… and ${report.problems.length - SHOWN_PROBLEMS} more problems (see --json)`)}\n`,
          );
        const types = Object.entries(report.byType)
          .map(([type, n]) => typeCount(type, n))
          .join(", ");
        const what = "extractionJobs" in report ? ` ${report.inserted === 1 ? "conversation" : "conversations"}` : "";
        process.stdout.write(
          `imported ${report.inserted} new${what} (${types || "nothing new"}), ${report.existing} already present, ${report.failed} failed ` +
            `of ${report.read} read (${FORMAT_NAMES[report.format] ?? report.format}${report.workspaceId ? `, workspace ${report.workspaceId}` : ""})\n`,
        );
        if (report.queued)
          process.stdout.write(
            chalk.dim(
              `${plural(report.queued, "source")} queued for the search index; a running server (or the next mnemo serve) indexes them\n`,
            ),
          );
        if ("extractionJobs" in report && options.extract) {
          process.stdout.write(
            report.extractionJobs
              ? `${plural(report.extractionJobs, "extraction job")} queued; a running server (or the next mnemo serve) forms memories from them (GET /v1/memories/extract/jobs)\n`
              : "no extraction job queued: every message was queued before\n",
          );
        }
      }
      if (report.failed > 0) process.exitCode = 3;
    });
}
