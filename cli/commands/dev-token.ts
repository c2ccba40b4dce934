import chalk from "chalk";
import type { Command } from "commander";
import { parseDuration } from "../../src/lib/time";
import { CliError, examples, printJson, printTable } from "../output";

/** Only the store of record, imported when a command runs, so `--help` loads none of it. */
async function openRecordStore(dataDir?: string) {
  return (await import("../../src/record-store")).openRecordStore(dataDir);
}

/** `mnemo dev-token create|list|revoke`: short-lived developer tokens (svc_dev_…), all scopes. */
export function registerDevTokenCommand(program: Command): void {
  const devToken = program
    .command("dev-token")
    .description("manage developer tokens")
    .addHelpText(
      "after",
      examples(
        "mnemo dev-token create --user alice --ttl 2h",
        "mnemo dev-token list --user alice",
        "mnemo dev-token revoke dev_4f9c2a7e1b",
      ),
    );

  devToken
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

  devToken
    .command("list")
    .description("list developer tokens (never their secrets): made here, or by the identity sync")
    .option("--user <id>", "only this user's tokens")
    .option("--data <dir>", "data directory")
    .option("--json", "machine-readable output")
    .addHelpText("after", examples("mnemo dev-token list --user alice"))
    .action(async (options: { user?: string; data?: string; json?: boolean }) => {
      const store = await openRecordStore(options.data);
      try {
        const list = await store.credentials.listDevTokens(options.user);
        if (options.json) return printJson(list);
        if (list.length === 0) return void process.stderr.write("no developer tokens\n");
        const now = Date.now();
        printTable(
          list.map((token) => ({
            id: token.id,
            user: token.userId,
            prefix: `${token.prefix}…`,
            issued: token.issuedBy ?? "cli",
            created: token.createdAt,
            expires: token.expiresAt,
            status: token.revokedAt
              ? chalk.red("revoked")
              : Date.parse(token.expiresAt) <= now
                ? chalk.dim("expired")
                : chalk.green("active"),
          })),
          ["id", "user", "prefix", "issued", "created", "expires", "status"],
        );
      } finally {
        await store.close();
      }
    });

  devToken
    .command("revoke")
    .description("revoke a developer token; it, and web app sessions made from it, stop working at once")
    .argument("<id>", "token id (dev_…)")
    .option("--data <dir>", "data directory")
    .option("--json", "machine-readable output")
    .addHelpText("after", examples("mnemo dev-token revoke dev_4f9c2a7e1b"))
    .action(async (id: string, options: { data?: string; json?: boolean }) => {
      const store = await openRecordStore(options.data);
      try {
        const outcome = await store.credentials.revokeDevToken(id);
        if (outcome === "not_found") throw new CliError(`no developer token with id '${id}'`);
        if (options.json) return printJson({ id, revoked: true, alreadyRevoked: outcome === "already_revoked" });
        process.stdout.write(outcome === "revoked" ? `revoked ${id}\n` : `${id} was already revoked\n`);
      } finally {
        await store.close();
      }
    });
}
