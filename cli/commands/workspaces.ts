import chalk from "chalk";
import { Option, type Command } from "commander";
import { createInterface } from "node:readline/promises";
import { CliError, examples, printJson, printTable } from "../output";
import { printable } from "./memories";

/**
 * `mnemo workspaces list|rename|delete`: a user's workspaces from a terminal, through the
 * services the API's routes call (same checks and isolation: another user's workspace is
 * "not found"), in this process, on the store of record of the data dir, whether or not a
 * server runs on it (cli/memory-access.ts says why that is safe). A delete's search index
 * removals are queued in the store: a running server applies them at once, else the next
 * `mnemo serve`; searches leave the deleted content out meanwhile.
 */

const userOption = () =>
  new Option("--user <id>", "the user whose workspaces these are").env("MNEMO_USER").makeOptionMandatory();
const dataOption = () => new Option("--data <dir>", "data directory (default: MNEMO_DATA_DIR or ~/.mnemo)");

interface Common {
  user: string;
  data?: string;
  json?: boolean;
}

type Services = Awaited<ReturnType<typeof import("../../src/compose").openServices>>;

/** Opens the services on the data dir (no index writer, no embedding model), runs `use`, and closes them. */
async function withServices<T>(options: Common, use: (services: Services, user: string) => Promise<T>): Promise<T> {
  if (!options.user.trim()) throw new CliError("--user: must not be empty");
  const [{ loadConfig }, { openServices }, { checkDataDir }, { cliErrorOf }] = await Promise.all([
    import("../../src/config"),
    import("../../src/compose"),
    import("../preflight"),
    import("../memory-access"),
  ]);
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig({ dataDir: options.data, logLevel: "warn", embeddings: { provider: "none" as const } });
  } catch (error) {
    throw new CliError((error as Error).message);
  }
  if (!config.storage.databaseUrl) checkDataDir(config.dataDir);
  const services = await openServices(config, { startIndexer: false });
  try {
    return await use(services, options.user).catch((error) => {
      throw cliErrorOf(error);
    });
  } finally {
    await services.close();
  }
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** What a delete removes, as the confirmation says it: "3 documents, 2 chats (5 messages), 1 file and 12 memories". */
export function describeContents(c: {
  documents: number;
  threads: number;
  messages: number;
  files: number;
  memories: number;
}): string {
  const parts = [
    plural(c.documents, "document"),
    `${plural(c.threads, "chat")}${c.messages ? ` (${plural(c.messages, "message")})` : ""}`,
    plural(c.files, "file"),
    plural(c.memories, "memory", "memories"),
  ];
  return `${parts.slice(0, -1).join(", ")} and ${parts[parts.length - 1]}`;
}

async function ask(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}

export function registerWorkspaceCommands(program: Command): void {
  const workspaces = program
    .command("workspaces")
    .description("list, rename and delete a user's workspaces")
    .addHelpText(
      "after",
      examples(
        "mnemo workspaces list --user alice",
        'mnemo workspaces rename ws_01J… "Finance 2025" --user alice',
        "mnemo workspaces delete ws_01J… --user alice",
      ),
    );

  workspaces
    .command("list")
    .description("a user's workspaces, oldest first")
    .addOption(userOption())
    .addOption(dataOption())
    .option("--json", "print the API's list answer (an array of {id, name, createdAt, updatedAt})")
    .addHelpText(
      "after",
      examples("mnemo workspaces list --user alice", "mnemo workspaces list --user alice --json | jq -r '.[].id'"),
    )
    .action(async (options: Common) => {
      const all = await withServices(options, async (services, user) => {
        const out = [];
        for (let cursor: string | undefined; ; ) {
          const page = await services.workspaces.list(user, { limit: "200", cursor });
          out.push(...page.items);
          if (!page.nextCursor) return out;
          cursor = page.nextCursor;
        }
      });
      if (options.json) return printJson(all);
      if (all.length === 0) return void process.stderr.write("no workspaces\n");
      printTable(
        all.map((w) => ({
          id: printable(w.id),
          created: w.createdAt.slice(0, 19).replace("T", " "),
          name: printable(w.name),
        })),
        ["id", "created", "name"],
      );
    });

  workspaces
    .command("rename")
    .description("give a workspace a new name")
    .argument("<id>", "the workspace's id (ws_…)")
    .argument("<name>", "its new name (1-200 characters, not blank)")
    .addOption(userOption())
    .addOption(dataOption())
    .option("--json", "print the API's answer ({workspace})")
    .addHelpText("after", examples('mnemo workspaces rename ws_01J… "Finance 2025" --user alice'))
    .action(async (id: string, name: string, options: Common) => {
      if (!name.trim()) throw new CliError("NAME: must not be blank");
      if (name.length > 200) throw new CliError("NAME: must be at most 200 characters");
      const workspace = await withServices(options, (services, user) => services.workspaces.rename(user, id, name));
      if (options.json) return printJson({ workspace });
      process.stderr.write(`${chalk.dim(printable(`renamed ${workspace.id} to '${workspace.name}'`))}\n`);
    });

  workspaces
    .command("delete")
    .description("delete a workspace and everything in it, for good")
    .argument("<id>", "the workspace's id (ws_…)")
    .addOption(userOption())
    .option("-y, --yes", "delete without asking (needed when not on a terminal)")
    .addOption(dataOption())
    .option("--json", "print the API's answer ({id, deleted, removed})")
    .addHelpText(
      "after",
      `
Deletes its documents and notes, chats and their messages, files and their bytes, its memories
with their history, extraction jobs, and their search entries. There is no undo. On a terminal
it says what goes and asks first; elsewhere it needs --yes.
${examples("mnemo workspaces delete ws_01J… --user alice", "mnemo workspaces delete ws_01J… --user alice --yes --json")}`,
    )
    .action(async (id: string, options: Common & { yes?: boolean }) => {
      if (!options.yes && !process.stdin.isTTY)
        throw new CliError("delete: not on a terminal, so nothing was asked; add --yes to delete for good");
      const outcome = await withServices(options, async (services, user) => {
        if (!options.yes) {
          const workspace = await services.workspaces.get(user, id);
          const contents = await services.workspaceRemoval.contents(user, id);
          const answer = await ask(
            printable(
              `Delete workspace '${workspace.name}'? Its ${describeContents(contents)} are deleted for good. [y/N] `,
            ),
          );
          if (!/^y(es)?$/i.test(answer.trim())) return null;
        }
        return services.workspaceRemoval.remove(user, id);
      });
      if (!outcome) return void process.stderr.write("nothing deleted\n");
      if (options.json) return printJson(outcome);
      process.stdout.write(`${outcome.id}\n`);
      process.stderr.write(`${chalk.dim(`deleted, with ${describeContents(outcome.removed)}`)}\n`);
    });
}
