import type { Command } from "commander";
import { CliError, examples, printJson, printTable } from "../output";

/** Opens the store of record and the usage service; lazily, so `--help` stays fast. */
async function openUsage(data: string | undefined) {
  const { openUsageStore } = await import("../../src/record-store");
  return openUsageStore(data);
}

function parseTokens(value: string): number {
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(Number(value)))
    throw new CliError(`limit: '${value}' is not a whole number of tokens`);
  return Number(value);
}

/** `mnemo usage show|set-limit`: monthly token usage and per-user limits, in the store of record. */
export function registerUsageCommand(program: Command): void {
  const usage = program
    .command("usage")
    .description("monthly token usage and limits")
    .addHelpText("after", examples("mnemo usage show --user alice", "mnemo usage set-limit --user alice 2000000"));

  usage
    .command("show")
    .description("a user's usage this month (UTC) and the limit in force")
    .requiredOption("--user <id>", "user id")
    .option("--data <dir>", "data directory")
    .option("--json", "machine-readable output")
    .addHelpText("after", examples("mnemo usage show --user alice"))
    .action(async (options: { user: string; data?: string; json?: boolean }) => {
      if (!options.user.trim()) throw new CliError("--user: must not be empty");
      const { usage: service, close } = await openUsage(options.data);
      try {
        const shown = await service.show(options.user);
        if (options.json) return printJson(shown);
        printTable(
          [
            {
              user: shown.user,
              month: shown.month,
              tokens: String(shown.totalTokens),
              prompt: String(shown.promptTokens),
              completion: String(shown.completionTokens),
              requests: String(shown.requestCount),
              limit: `${shown.limit}${shown.limitSource === "override" ? " (override)" : ""}`,
              remaining: String(shown.remaining),
            },
          ],
          ["user", "month", "tokens", "prompt", "completion", "requests", "limit", "remaining"],
        );
      } finally {
        await close();
      }
    });

  usage
    .command("set-limit")
    .description("set a user's monthly token limit (overrides MONTHLY_TOKEN_LIMIT); --default removes the override")
    .requiredOption("--user <id>", "user id")
    .argument("[tokens]", "tokens per month")
    .option("--default", "remove the override: MONTHLY_TOKEN_LIMIT applies again")
    .option("--data <dir>", "data directory")
    .option("--json", "machine-readable output")
    .addHelpText(
      "after",
      examples("mnemo usage set-limit --user alice 2000000", "mnemo usage set-limit --user alice --default"),
    )
    .action(
      async (
        tokens: string | undefined,
        options: { user: string; default?: boolean; data?: string; json?: boolean },
      ) => {
        if (!options.user.trim()) throw new CliError("--user: must not be empty");
        if (options.default === (tokens !== undefined))
          throw new CliError("give either a number of tokens or --default");
        const limit = tokens === undefined ? null : parseTokens(tokens);
        const { usage: service, close } = await openUsage(options.data);
        try {
          if (limit === null) await service.clearLimit(options.user);
          else await service.setLimit(options.user, limit);
          const shown = await service.show(options.user);
          if (options.json) return printJson({ user: shown.user, limit: shown.limit, limitSource: shown.limitSource });
          process.stdout.write(`${shown.user}: ${shown.limit} tokens per month (${shown.limitSource})\n`);
        } finally {
          await close();
        }
      },
    );
}
