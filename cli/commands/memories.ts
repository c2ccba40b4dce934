import chalk from "chalk";
import { Option, type Command } from "commander";
import type { MemoryRecord } from "../../src/memories/model";
import { CliError, examples, printJson, printTable } from "../output";
import { registerJobCommands } from "./memory-jobs";

/**
 * `mnemo remember`, `mnemo recall` and `mnemo memories list|show|forget`: a user's memories
 * from a terminal, through the memories service the API calls (same checks, limits and
 * isolation), in this process, whether or not a server runs on the data dir
 * (cli/memory-access.ts says how). `--json` prints what the matching API route answers.
 */

/** The user the command acts for: `--user`, else MNEMO_USER. */
const userOption = () =>
  new Option("--user <id>", "the user whose memories these are").env("MNEMO_USER").makeOptionMandatory();
const dataOption = () => new Option("--data <dir>", "data directory (default: MNEMO_DATA_DIR or ~/.mnemo)");

interface Common {
  user: string;
  data?: string;
  json?: boolean;
}

function requireUser(options: Common): string {
  if (!options.user.trim()) throw new CliError("--user: must not be empty");
  return options.user;
}

const access = () => import("../memory-access");
const model = () => import("../../src/memories/model");

/**
 * Stored text as a terminal may show it: control characters (an escape sequence could
 * recolour, retitle or rewrite the terminal) become their visible pictures (ESC as ␛),
 * tabs and, when `keepNewlines`, line breaks aside. `--json` needs none of this: JSON escapes them.
 */
export function printable(text: string, keepNewlines = false): string {
  return (keepNewlines ? text.replace(/\r\n/g, "\n") : text).replace(
    keepNewlines ? /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g : /[\x00-\x08\x0a-\x1f\x7f-\x9f]/g,
    (c) => {
      const code = c.charCodeAt(0);
      return code < 0x20 ? String.fromCharCode(0x2400 + code) : code === 0x7f ? "\u2421" : "\ufffd";
    },
  );
}

/** One line of a memory's text for a listing: whitespace folded, control characters shown, cut at `width` characters. */
function oneLine(text: string, width: number): string {
  const folded = printable(text.replace(/\s+/g, " ").trim());
  return folded.length > width ? `${folded.slice(0, width - 1)}…` : folded;
}

/** Room for text on this terminal's line after `used` characters; a fixed width when not a terminal. */
const textWidth = (used: number) => Math.max(20, (process.stdout.isTTY ? process.stdout.columns || 100 : 100) - used);

/** `--limit` as the API would receive it: a number when it is one, else as typed (refused by the API's schema). */
const limitValue = (raw: string | undefined) =>
  raw === undefined ? undefined : /^-?\d+$/.test(raw) ? Number(raw) : raw;

export function registerMemoryCommands(program: Command): void {
  program
    .command("remember")
    .description("store a memory for a user")
    .argument("<text>", "what to remember (at most 51,200 bytes); - reads it from stdin")
    .addOption(userOption())
    .option("--workspace <id>", "put it in this workspace (one of the user's)")
    .option("--session <id>", "the conversation it belongs to (session_id)")
    .option(
      "--timestamp <time>",
      "when it was said or learnt: ISO 8601 (2024-05-01T09:30:00Z) or Unix seconds; default now",
    )
    .option("--metadata <json>", 'a JSON object of metadata, e.g. \'{"source":"terminal"}\'')
    .addOption(dataOption())
    .option("--json", "print the stored memory as the API returns it")
    .addHelpText(
      "after",
      `
The memory is written to the store of record; a running server indexes it at once, else the next
recall (or mnemo serve) does. The id goes to stdout. A memory the user already has (the same text
in the same workspace, case and spacing aside) is not stored again: "already remembered" is said
on stderr and the id is the one stored before.
${examples(
  'mnemo remember "Alice prefers green tea" --user alice',
  'mnemo remember "Standup moved to 10:00" --user alice --workspace ws_team --timestamp 2024-05-01T09:30:00Z',
  'echo "Deploys happen on Fridays" | mnemo remember - --user alice --metadata \'{"source":"shell"}\' --json',
)}`,
    )
    .action(
      async (
        text: string,
        options: Common & { workspace?: string; session?: string; timestamp?: string; metadata?: string },
      ) => {
        const user = requireUser(options);
        const content = text === "-" ? (await Bun.stdin.text()).replace(/\r?\n$/, "") : text;
        let metadata: unknown;
        if (options.metadata !== undefined) {
          try {
            metadata = JSON.parse(options.metadata);
          } catch (error) {
            throw new CliError(`--metadata: is not valid JSON (${(error as Error).message})`);
          }
        }
        const { checkBody, withMemories, cliErrorOf } = await access();
        const { CreateMemoryBody } = await model();
        const body = await checkBody<typeof CreateMemoryBody.static>(
          CreateMemoryBody,
          defined({ content, metadata, workspace_id: options.workspace, session_id: options.session }),
        );
        let timestamp: string | number | undefined;
        if (options.timestamp !== undefined) {
          // Checked before the store is opened, with the service's own rule.
          const { timestampToIso } = await import("../../src/shared/timestamp");
          timestamp = /^\d+(\.\d+)?$/.test(options.timestamp) ? Number(options.timestamp) : options.timestamp;
          try {
            timestampToIso(timestamp, "timestamp");
          } catch (error) {
            throw cliErrorOf(error);
          }
        }
        const { memory: created, duplicate } = await withMemories(options, ({ memories }) =>
          memories.store(user, { ...body, ...defined({ timestamp }) }, { kind: "cli" }),
        );
        // An exact duplicate stores nothing: the id printed is the memory already stored, as the API answers it.
        const said = duplicate
          ? `already remembered for ${user}${created.workspaceId ? ` in ${created.workspaceId}` : ""}: nothing stored (${created.createdAt})`
          : `remembered for ${user}${created.workspaceId ? ` in ${created.workspaceId}` : ""} (${created.createdAt})`;
        if (options.json) {
          if (duplicate) process.stderr.write(`${chalk.dim(printable(said))}\n`);
          return printJson(created);
        }
        process.stdout.write(`${created.id}\n`);
        process.stderr.write(`${chalk.dim(printable(said))}\n`);
      },
    );

  program
    .command("recall")
    .description("search a user's memories, best first, with their scores")
    .argument("<query>", "what to look for (words or a question)")
    .addOption(userOption())
    .option("--limit <n>", "at most this many results (1-100; default 10)")
    .option("--workspace <id>", "only memories of this workspace")
    .addOption(dataOption())
    .option("--json", "print the API's search answer ({results, data, mode, strategy})")
    .addHelpText(
      "after",
      `
Memories the user stored just before are found at once, whether or not a server runs.
${examples('mnemo recall "what does alice drink" --user alice', "mnemo recall tea --user alice --limit 3 --json | jq -r '.results[].content'")}`,
    )
    .action(async (query: string, options: Common & { limit?: string; workspace?: string }) => {
      const user = requireUser(options);
      const { checkBody, withMemories } = await access();
      const { SearchMemoriesBody } = await model();
      const filters = options.workspace === undefined ? undefined : { workspace_id: options.workspace };
      const body = await checkBody<typeof SearchMemoriesBody.static>(
        SearchMemoriesBody,
        defined({ query, limit: limitValue(options.limit), filters }),
      );
      const { response, awaitingVectors, unavailable } = await withMemories(
        { ...options, search: true },
        async ({ memories, makeVectors }) => {
          const vectors = await makeVectors();
          return { ...(await memories.search(user, body)), ...vectors };
        },
      );
      const changes = (n: number) => `${n} change${n === 1 ? "" : "s"}`;
      if (unavailable)
        process.stderr.write(
          chalk.yellow(`vectors unavailable (${unavailable}): memories are found by their words only\n`),
        );
      if (awaitingVectors > 0)
        process.stderr.write(
          chalk.yellow(
            `${changes(awaitingVectors)} still wait${awaitingVectors === 1 ? "s" : ""} for vectors: recent memories are found by their words only\n`,
          ),
        );
      if (options.json) return printJson(response);
      if (response.results.length === 0) return void process.stderr.write("no memories match\n");
      for (const [i, hit] of response.results.entries()) {
        const rank = String(i + 1).padStart(2);
        process.stdout.write(
          `${rank}. ${chalk.cyan(hit.score.toFixed(3))}  ${chalk.dim(printable(hit.id))}  ${oneLine(hit.content, textWidth(hit.id.length + 13))}\n`,
        );
      }
    });

  const memoriesCommand = program
    .command("memories")
    .description(
      "list, show and forget a user's memories; see and retry their extraction jobs; review what capture proposed to change",
    )
    .addHelpText(
      "after",
      examples(
        "mnemo memories list --user alice",
        "mnemo memories show mem_01J… --user alice",
        "mnemo memories forget mem_01J… --user alice",
        "mnemo memories jobs --user alice",
      ),
    );

  registerJobCommands(memoriesCommand, { userOption, dataOption, requireUser, printable });

  memoriesCommand
    .command("list")
    .description("a user's memories, newest first")
    .addOption(userOption())
    .option("--limit <n>", "at most this many (1-1000; default 100)")
    .option("--workspace <id>", "only this workspace's memories")
    .option("--cursor <cursor>", "the next page: nextCursor of the previous --json output")
    .addOption(dataOption())
    .option("--json", "print the API's list answer ({data, nextCursor, hasMore})")
    .addHelpText(
      "after",
      examples(
        "mnemo memories list --user alice --limit 20",
        "mnemo memories list --user alice --workspace ws_team --json",
      ),
    )
    .action(async (options: Common & { limit?: string; workspace?: string; cursor?: string }) => {
      const user = requireUser(options);
      const { checkBody, withMemories } = await access();
      const { ListMemoriesQuery } = await model();
      const query = await checkBody<{ limit?: string; cursor?: string; workspaceId?: string }>(
        ListMemoriesQuery,
        defined({ limit: options.limit, cursor: options.cursor, workspaceId: options.workspace }),
      );
      const page = await withMemories(options, ({ memories }) => memories.list(user, query));
      if (options.json) return printJson(page);
      if (page.data.length === 0) return void process.stderr.write("no memories\n");
      const rows = page.data.map((m) => ({
        id: printable(m.id),
        created: m.createdAt.slice(0, 19).replace("T", " "),
        workspace: printable(m.workspaceId ?? ""),
        content: "",
      }));
      const used =
        Math.max(...rows.map((r) => r.id.length)) + 19 + Math.max(9, ...rows.map((r) => r.workspace.length)) + 6;
      for (const [i, row] of rows.entries()) row.content = oneLine(page.data[i].content, textWidth(used));
      printTable(rows, ["id", "created", "workspace", "content"]);
      if (page.hasMore) process.stderr.write(chalk.dim(`more: --cursor ${page.nextCursor}\n`));
    });

  memoriesCommand
    .command("show")
    .description("one memory, in full")
    .argument("<id>", "the memory's id (mem_…)")
    .addOption(userOption())
    .addOption(dataOption())
    .option("--json", "print the memory as the API returns it")
    .addHelpText("after", examples("mnemo memories show mem_01J… --user alice"))
    .action(async (id: string, options: Common) => {
      const user = requireUser(options);
      const { checkBody, withMemories } = await access();
      const { MemoryParams } = await model();
      await checkBody(MemoryParams, { id });
      const memory = await withMemories(options, ({ memories }) => memories.get(user, id));
      if (options.json) return printJson(memory);
      printMemory(memory);
    });

  memoriesCommand
    .command("forget")
    .description("delete memories; they leave the search index too")
    .argument("<ids...>", "the memories' ids (mem_…)")
    .addOption(userOption())
    .addOption(dataOption())
    .option("--json", "print one API answer per id ({id, deleted, success}, or {id, error} for an unknown one)")
    .addHelpText(
      "after",
      `
Each id is forgotten on its own; an unknown id (or another user's) is reported and the command exits 1.
${examples("mnemo memories forget mem_01J… mem_01K… --user alice")}`,
    )
    .action(async (ids: string[], options: Common) => {
      const user = requireUser(options);
      const { checkBody, withMemories } = await access();
      const { MemoryParams } = await model();
      for (const id of ids) await checkBody(MemoryParams, { id });
      const outcomes = await withMemories(options, async ({ memories }) => {
        const done: Array<
          { id: string; deleted: true; success: true } | { id: string; error: { code: string; message: string } }
        > = [];
        for (const id of ids) {
          try {
            done.push(await memories.delete(user, id, { kind: "cli" }));
          } catch (error) {
            const code = (error as { errorCode?: string }).errorCode;
            if (code !== "not_found") throw error;
            done.push({ id, error: { code, message: (error as Error).message } });
          }
        }
        return done;
      });
      const missing = outcomes.filter((o) => "error" in o);
      if (missing.length) process.exitCode = 1;
      if (options.json) return printJson(outcomes);
      for (const outcome of outcomes) {
        if ("error" in outcome) process.stderr.write(`${chalk.red(`mnemo: ${outcome.error.message}`)}\n`);
        else process.stdout.write(`forgot ${outcome.id}\n`);
      }
    });

  registerProposalCommands(memoriesCommand);
}

/**
 * `mnemo memories proposals [accept|reject ID]`: what automatic formation (capture)
 * proposed to change in memories the person wrote, and the person's decision on each.
 */
function registerProposalCommands(memoriesCommand: Command): void {
  const proposals = memoriesCommand
    .command("proposals")
    .description("changes capture proposed to memories the user wrote, waiting for the user's decision")
    // Shared with `accept` and `reject` (commander reads them before the subcommand's own):
    // mandatory there would make `proposals accept` ask for it twice, so checked in the actions.
    .addOption(new Option("--user <id>", "the user whose memories these are").env("MNEMO_USER"))
    .option("--limit <n>", "at most this many (1-1000; default 100)")
    .option("--cursor <cursor>", "the next page: nextCursor of the previous --json output")
    .addOption(dataOption())
    .option("--json", "print the API's list answer ({data, nextCursor, hasMore})")
    .addHelpText(
      "after",
      examples(
        "mnemo memories proposals --user alice",
        "mnemo memories proposals accept prop_01J… --user alice",
        "mnemo memories proposals reject prop_01J… --user alice",
      ),
    )
    .action(async (options: Common & { limit?: string; cursor?: string }) => {
      if (options.user === undefined) throw new CliError("required option '--user <id>' not specified");
      const user = requireUser(options);
      const { checkBody, withMemories } = await access();
      const { ListProposalsQuery } = await model();
      const query = await checkBody<{ limit?: string; cursor?: string }>(
        ListProposalsQuery,
        defined({ limit: options.limit, cursor: options.cursor }),
      );
      const page = await withMemories(options, ({ memories }) => memories.proposals.list(user, query));
      if (options.json) return printJson(page);
      if (page.data.length === 0) return void process.stderr.write("no proposals\n");
      for (const p of page.data) {
        process.stdout.write(
          `${chalk.dim(printable(p.id))}  ${p.action} ${printable(p.memoryId)}  ${chalk.dim(p.createdAt.slice(0, 19).replace("T", " "))}\n`,
        );
        process.stdout.write(
          `  now:      ${p.memory ? oneLine(p.memory.content, textWidth(12)) : chalk.dim("(deleted)")}\n`,
        );
        if (p.action === "update") process.stdout.write(`  proposed: ${oneLine(p.content ?? "", textWidth(12))}\n`);
        process.stdout.write(
          `${chalk.dim(printable(`  from thread ${p.threadId ?? "-"}, model ${p.model ?? "-"}`))}\n`,
        );
      }
      if (page.hasMore) process.stderr.write(chalk.dim(`more: --cursor ${page.nextCursor}\n`));
    });

  for (const decision of ["accept", "reject"] as const) {
    proposals
      .command(decision)
      .description(
        decision === "accept"
          ? "apply a proposal (refused when its memory changed since)"
          : "turn a proposal down; the memory stays as it is",
      )
      .argument("<id>", "the proposal's id (prop_…)")
      .option("--json", "print the proposal as the API answers it")
      .addHelpText("after", examples(`mnemo memories proposals ${decision} prop_01J… --user alice`))
      .action(async (id: string, _options: unknown, command: Command) => {
        const options = command.optsWithGlobals<Common>();
        if (options.user === undefined) throw new CliError("required option '--user <id>' not specified");
        const user = requireUser(options);
        const { checkBody, withMemories } = await access();
        const { ProposalParams } = await model();
        await checkBody(ProposalParams, { id });
        const decided = await withMemories(options, ({ memories }) => memories.proposals[decision](user, id));
        if (options.json) return printJson(decided);
        process.stdout.write(`${decision === "accept" ? "accepted" : "rejected"} ${printable(decided.id)}\n`);
      });
  }
}

function printMemory(m: MemoryRecord): void {
  const fields: Array<[string, string]> = [
    ["id", m.id],
    ["created", m.createdAt],
    ["updated", m.updatedAt],
    ["workspace", m.workspaceId ?? "-"],
    ["session", m.session_id ?? "-"],
    ["metadata", JSON.stringify(m.metadata)],
  ];
  for (const [name, value] of fields) process.stdout.write(`${chalk.dim(name.padEnd(10))}${printable(value)}\n`);
  process.stdout.write(`\n${printable(m.content, true)}\n`);
}

/** The object without its undefined entries (commander leaves absent options undefined). */
function defined<T extends Record<string, unknown>>(object: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as never;
}
