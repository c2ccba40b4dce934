import chalk from "chalk";
import type { ChatExport } from "../../src/transfer/chat-exports";
import { CliError, plural, printJson, progressBar } from "../output";
import { printable } from "./memories";

/** Conversations a dry run with `--extract` asks the model about unless `--limit` says otherwise: each one is two metered calls. */
export const DRY_RUN_EXTRACT_DEFAULT = 3;

interface PreviewOptions {
  user: string;
  data?: string;
  json?: boolean;
  extract?: boolean;
  limit?: number;
}

/**
 * `mnemo import EXPORT --dry-run`: what the export holds, nothing written. With `--extract`, the
 * memory model is asked, as POST /v1/memories/extract?dry_run=true is, what it would form from
 * the first conversations (their first 100 messages, as the first extraction job reads them)
 * against the user's memories; the calls are admitted and metered as extraction's are.
 */
export async function previewChatImport(path: string, exported: ChatExport, options: PreviewOptions): Promise<void> {
  // What the import would take (`--limit`, else all), and what the model is asked about (`--limit`, else the first few).
  const chosen = exported.conversations.slice(0, options.limit ?? exported.conversations.length);
  const conversations = chosen.slice(0, options.limit ?? DRY_RUN_EXTRACT_DEFAULT);
  const summary = {
    format: `${exported.source}-export`,
    read: exported.read,
    conversations: chosen.length,
    messages: chosen.reduce((n, c) => n + c.messages.length, 0),
    problems: exported.problems,
  };
  const formed: Array<{ title: string; messages: number; facts: string[]; decisions: unknown[] }> = [];
  if (options.extract) {
    const [
      { loadConfig },
      { openServices },
      { checkDataDir },
      { cliErrorOf },
      { MAX_EXTRACT_MESSAGES, MAX_MESSAGE_CHARS },
    ] = await Promise.all([
      import("../../src/config"),
      import("../../src/compose"),
      import("../preflight"),
      import("../memory-access"),
      import("../../src/formation/model"),
    ]);
    let config: ReturnType<typeof loadConfig>;
    try {
      // Similar memories are found by their words: a dry run loads no embedding model.
      config = loadConfig({ dataDir: options.data, logLevel: "error", embeddings: { provider: "none" } });
    } catch (error) {
      throw new CliError((error as Error).message);
    }
    if (!config.storage.databaseUrl) checkDataDir(config.dataDir);
    const services = await openServices(config, { startIndexer: false });
    const bar = options.json ? null : progressBar("asking the memory model");
    try {
      for (const [i, conversation] of conversations.entries()) {
        const messages = conversation.messages
          .slice(0, MAX_EXTRACT_MESSAGES)
          .map((m) => ({ role: m.role, content: m.content.slice(0, MAX_MESSAGE_CHARS) }));
        const answer = messages.length
          ? await services.formation
              .extract({ userId: options.user, body: { messages }, dryRun: true })
              .catch((error) => {
                const failure = cliErrorOf(error);
                throw failure instanceof CliError
                  ? new CliError(`${conversation.place} '${conversation.title}': ${failure.message}`)
                  : failure;
              })
          : { facts: [], decisions: [] };
        formed.push({
          title: conversation.title,
          messages: conversation.messages.length,
          facts: answer.facts,
          decisions: answer.decisions,
        });
        bar?.update(i + 1, conversations.length);
      }
    } finally {
      bar?.finish();
      await services.close();
    }
  }
  if (options.json) return printJson({ dryRun: true, ...summary, ...(options.extract ? { extraction: formed } : {}) });
  for (const problem of exported.problems.slice(0, 50))
    process.stderr.write(`${chalk.yellow(`${path}: ${problem.place}: ${problem.message}`)}\n`);
  process.stdout.write(
    `would import ${plural(summary.conversations, "conversation")} (${plural(summary.messages, "message")}) of ${summary.read} read (${exported.source === "chatgpt" ? "ChatGPT" : "Claude"} export); nothing was written\n`,
  );
  for (const conversation of formed) {
    process.stdout.write(
      `\n${chalk.bold(printable(conversation.title))} ${chalk.dim(`(${plural(conversation.messages, "message")})`)}\n`,
    );
    if (!conversation.decisions.length) process.stdout.write(chalk.dim("  nothing to remember\n"));
    for (const d of conversation.decisions as Array<{
      action: string;
      fact: string;
      content: string | null;
      memoryId: string | null;
      reason?: string;
    }>) {
      const line =
        d.action === "add"
          ? `+ ${d.content}`
          : d.action === "update"
            ? `~ ${d.memoryId}: ${d.content}`
            : d.action === "delete"
              ? `- ${d.memoryId}`
              : `= ${d.fact} (${d.reason ?? "none"})`;
      process.stdout.write(`  ${printable(line)}\n`);
    }
  }
}
