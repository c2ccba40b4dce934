import chalk from "chalk";
import type { Command } from "commander";
import { ALL_SCOPES, OPERATOR_SCOPE, parseScopes, type Scope } from "../../src/auth/scopes";
import { CliError, examples, printJson, printTable } from "../output";

/** The store of record only (no LanceDB, no services), imported when a command runs. */
async function openRecordStore(dataDir?: string) {
  return (await import("../../src/record-store")).openRecordStore(dataDir);
}

/** `mnemo keys create|list|revoke`: API keys live in SQLite; only their hashes are stored. */
export function registerKeysCommand(program: Command): void {
  const keys = program
    .command("keys")
    .description("manage API keys")
    .addHelpText("after", examples("mnemo keys create --user alice --name laptop", "mnemo keys list --user alice"));

  keys
    .command("create")
    .description("create an API key (the key is printed once)")
    .requiredOption("--user <id>", "user id the key acts for")
    .option("--scopes <list>", `comma-separated scopes (default: ${ALL_SCOPES.join(",")})`)
    .option(
      "--operator",
      "a key for operating the server: only the 'operator' scope (GET /health's server details), no user data",
    )
    .option("--test", "create a test key (svc_sk_test_…)")
    .option("--name <name>", "a label for the key")
    .option("--data <dir>", "data directory")
    .option("--json", "machine-readable output")
    .addHelpText(
      "after",
      `
Scopes: ${ALL_SCOPES.join(", ")} (default: all).
An operator key (--operator) carries only '${OPERATOR_SCOPE}': /health answers it with the server's
details (index location, replicas, last write error, counts over all users); it reads no user's data.
${examples("mnemo keys create --user alice --scopes memory:read,chat --name laptop", "mnemo keys create --user ops --operator --name monitoring")}`,
    )
    .action(
      async (options: {
        user: string;
        scopes?: string;
        operator?: boolean;
        test?: boolean;
        name?: string;
        data?: string;
        json?: boolean;
      }) => {
        if (!options.user.trim()) throw new CliError("--user: must not be empty");
        if (options.operator && options.scopes !== undefined)
          throw new CliError(
            "--operator: an operator key carries only the operator scope; make a separate key for --scopes",
          );
        let scopes: Scope[];
        try {
          scopes = options.operator ? [OPERATOR_SCOPE] : parseScopes(options.scopes ?? ALL_SCOPES.join(","));
        } catch (error) {
          throw new CliError(`--scopes: ${(error as Error).message}`);
        }
        const store = await openRecordStore(options.data);
        try {
          const created = await store.credentials.createApiKey({
            userId: options.user,
            scopes,
            test: options.test,
            name: options.name,
          });
          if (options.json) return printJson(created);
          process.stdout.write(`${created.key}\n`);
          process.stderr.write(
            chalk.dim(
              `key ${created.id} for ${created.userId} (${created.scopes.join(", ")}); it is shown only once\n`,
            ),
          );
        } finally {
          await store.close();
        }
      },
    );

  keys
    .command("list")
    .description("list API keys (never their secrets)")
    .option("--user <id>", "only this user's keys")
    .option("--data <dir>", "data directory")
    .option("--json", "machine-readable output")
    .addHelpText("after", examples("mnemo keys list --user alice"))
    .action(async (options: { user?: string; data?: string; json?: boolean }) => {
      const store = await openRecordStore(options.data);
      try {
        const list = await store.credentials.listApiKeys(options.user);
        if (options.json) return printJson(list);
        if (list.length === 0) return void process.stderr.write("no keys\n");
        printTable(
          list.map((k) => ({
            id: k.id,
            user: k.userId,
            name: k.name ?? "",
            prefix: `${k.prefix}…`,
            scopes: k.scopes.join(","),
            created: k.createdAt,
            status: k.revokedAt ? chalk.red("revoked") : chalk.green("active"),
          })),
          ["id", "user", "name", "prefix", "scopes", "created", "status"],
        );
      } finally {
        await store.close();
      }
    });

  keys
    .command("revoke")
    .description("revoke an API key; it stops working at once")
    .argument("<id>", "key id (key_…)")
    .option("--data <dir>", "data directory")
    .option("--json", "machine-readable output")
    .addHelpText("after", examples("mnemo keys revoke key_4f9c2a7e1b"))
    .action(async (id: string, options: { data?: string; json?: boolean }) => {
      const store = await openRecordStore(options.data);
      try {
        const outcome = await store.credentials.revokeApiKey(id);
        if (outcome === "not_found") throw new CliError(`no API key with id '${id}'`);
        if (options.json) return printJson({ id, revoked: true, alreadyRevoked: outcome === "already_revoked" });
        process.stdout.write(outcome === "revoked" ? `revoked ${id}\n` : `${id} was already revoked\n`);
      } finally {
        await store.close();
      }
    });
}
