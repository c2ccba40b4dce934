import chalk from "chalk";
import type { Command, Option } from "commander";
import type { FormationJob } from "../../src/formation/model";
import { examples, printJson, printTable } from "../output";

/** The options every memory command shares (cli/commands/memories.ts). */
interface Shared {
  userOption: () => Option;
  dataOption: () => Option;
  requireUser: (options: { user: string }) => string;
  /** Stored text made safe for a terminal. */
  printable: (text: string) => string;
}

const access = () => import("../memory-access");

interface JobOptions {
  user: string;
  data?: string;
  json?: boolean;
}

/** One line per job: status, why it failed and when it runs again; never the conversation's text. */
function printJobs(jobs: FormationJob[], printable: Shared["printable"]): void {
  const rows = jobs.map((j) => ({
    id: j.id,
    status: j.status,
    attempts: String(j.attempts),
    next: j.nextAttemptAt ? j.nextAttemptAt.slice(0, 19).replace("T", " ") : "",
    thread: printable(j.threadId),
    error: printable(j.lastError ?? ""),
  }));
  printTable(rows, ["id", "status", "attempts", "next", "thread", "error"]);
}

/**
 * `mnemo memories jobs [retry ID]`: a user's extraction jobs of captured conversations (what
 * `GET /v1/memories/extract/jobs` answers), and a retry of a failed one, through the same
 * capture service the API calls. A retried job is run by the server's worker (`mnemo serve`).
 */
export function registerJobCommands(memories: Command, shared: Shared): void {
  const jobs = memories
    .command("jobs")
    .description("a user's extraction jobs of captured conversations, newest first; failing ones with their reason")
    // Also `retry`'s options (it reads them with optsWithGlobals): commander parses a parent's options after its subcommand too.
    .addOption(shared.userOption())
    .addOption(shared.dataOption())
    .option("--json", "print the API's answer ({data: [jobs]}; retry: the job)")
    .addHelpText(
      "after",
      `
A job is retrying from its first failed attempt (with the error and when it runs again), failed
after its last; a conversation that could not be stored at all is a failed job that cannot be retried.
${examples("mnemo memories jobs --user alice", "mnemo memories jobs retry job_01J… --user alice")}`,
    )
    .action(async (options: JobOptions) => {
      const user = shared.requireUser(options);
      const { withMemories } = await access();
      const list = await withMemories(options, ({ capture }) => capture.jobs(user));
      if (options.json) return printJson(list);
      if (list.data.length === 0) return void process.stderr.write("no extraction jobs\n");
      printJobs(list.data, shared.printable);
      const retryable = list.data.filter((j) => j.retryable).length;
      if (retryable)
        process.stderr.write(
          chalk.dim(`${retryable} can be retried: mnemo memories jobs retry ID --user ${shared.printable(user)}\n`),
        );
    });

  jobs
    .command("retry")
    .description("run a failed (or retrying) extraction job again now, its attempts reset")
    .argument("<id>", "the job's id (job_…)")
    .configureHelp({ showGlobalOptions: true })
    .addHelpText(
      "after",
      `
The job is queued at once; a running server's worker runs it within seconds (none running: at the
next mnemo serve). A job that is pending, running or done, or whose conversation was never stored,
is refused (exit 1); another user's job is not found.
${examples("mnemo memories jobs retry job_01J… --user alice")}`,
    )
    .action(async (id: string, _own: object, command: Command) => {
      const options = command.optsWithGlobals<JobOptions>();
      const user = shared.requireUser(options);
      const { withMemories, checkBody } = await access();
      const { FormationJobParams } = await import("../../src/formation/model");
      await checkBody(FormationJobParams, { id });
      const job = await withMemories(options, ({ capture }) => capture.retry(user, id));
      if (options.json) return printJson(job);
      process.stdout.write(`queued ${job.id}\n`);
    });
}
