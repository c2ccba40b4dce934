import type { Command } from "commander";
import { parseDuration } from "../../src/lib/time";
import { CliError, examples, printJson } from "../output";

/** `mnemo dev-token create`: short-lived developer tokens (svc_dev_…), all scopes. */
export function registerDevTokenCommand(program: Command): void {
  program
    .command("dev-token")
    .description("manage developer tokens")
    .addHelpText("after", examples("mnemo dev-token create --user alice --ttl 2h"))
    .command("create")
    .description("create a developer token (printed once)")
    .requiredOption("--user <id>", "user id the token acts for")
    .option("--ttl <duration>", "lifetime, e.g. 90m, 24h, 7d", "24h")
    .option("--data <dir>", "data directory")
    .option("--json", "machine-readable output")
    .addHelpText("after", examples("mnemo dev-token create --user alice --ttl 2h"))
    .action(async (options: { user: string; ttl: string; data?: string; json?: boolean }) => {
      if (!options.user.trim()) throw new CliError("--user: must not be empty");
      const ttlMs = parseDuration(options.ttl);
      if (ttlMs === null) throw new CliError(`--ttl: '${options.ttl}' is not a duration like 90s, 15m, 24h or 7d`);
      // Only the store of record, imported here so `--help` loads none of it.
      const { openRecordStore } = await import("../../src/record-store");
      const store = await openRecordStore(options.data);
      try {
        const created = await store.credentials.createDevToken({ userId: options.user, ttlMs });
        if (options.json) return printJson(created);
        process.stdout.write(`${created.token}\n`);
        process.stderr.write(`expires ${created.expiresAt}\n`);
      } finally {
        await store.close();
      }
    });
}
