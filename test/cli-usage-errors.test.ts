import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliDataDirs, runCli } from "./helpers/cli";
import { databaseEnvFor } from "./helpers/database";

const { root, dataDir } = cliDataDirs("mnemo-cli-usage-");

/** Exit code, stdout and stderr's lines: an expected failure is exit 1, nothing on stdout, one line. */
const outcome = (result: { exitCode: number; stdout: string; stderr: string }) => ({
  exitCode: result.exitCode,
  stdout: result.stdout,
  lines: result.stderr.trimEnd().split("\n"),
});

describe("a command line that is missing something, or has too much, is one line naming it", () => {
  test.each([
    [["remember", "x"], "mnemo: --user: is required (or set MNEMO_USER)"],
    [["recall", "tea"], "mnemo: --user: is required (or set MNEMO_USER)"],
    [["memories", "list"], "mnemo: --user: is required (or set MNEMO_USER)"],
    [["memories", "show", "--user", "a"], "mnemo: ID: is required"],
    [["memories", "forget", "--user", "a"], "mnemo: ID...: is required"],
    [["memories"], "mnemo: memories: needs a command: jobs, list, show, forget, proposals (see mnemo memories --help)"],
    [
      ["remember", "a", "b", "--user", "a"],
      "mnemo: too many arguments: mnemo remember takes TEXT (see mnemo remember --help)",
    ],
    [
      ["remember", "a", "--user", "a", "--bogus"],
      "mnemo: --bogus: is not an option of mnemo remember (see mnemo remember --help)",
    ],
    [["memories", "list", "--user", "a", "--limit"], "mnemo: --limit: needs a value"],
    [["remembr", "x"], "mnemo: 'remembr' is not a command of mnemo; did you mean remember? (see mnemo --help)"],
    [["keys"], "mnemo: keys: needs a command: create, list, revoke (see mnemo keys --help)"],
    [["keys", "create"], "mnemo: --user: is required"],
    [["keys", "revoke"], "mnemo: ID: is required"],
    [["open"], "mnemo: --user: is required"],
    [["import"], "mnemo: --user: is required"],
    [["import", "--user", "a"], "mnemo: PATH: is required"],
    [["export", "--user", "a"], "mnemo: --out: is required"],
    [["backup"], "mnemo: --out: is required"],
    [["restore"], "mnemo: DIR: is required"],
    [["escrow", "status"], "mnemo: --user: is required"],
    [["escrow", "rotate-master"], "mnemo: --new-key-file: is required"],
    [["usage", "show"], "mnemo: --user: is required"],
    [["dev-token", "create"], "mnemo: --user: is required"],
    [["mcp"], "mnemo: --user: is required"],
  ])("mnemo %p", async (args, line) => {
    expect(outcome(await runCli(args))).toEqual({ exitCode: 1, stdout: "", lines: [line] });
  });

  test("an empty TEXT or QUERY is named in our words, not TypeBox's", async () => {
    const data = dataDir("empty");
    expect(outcome(await runCli(["remember", "", "--user", "a", "--data", data]))).toEqual({
      exitCode: 1,
      stdout: "",
      lines: ["mnemo: TEXT: must not be empty"],
    });
    expect(outcome(await runCli(["recall", "", "--user", "a", "--data", data]))).toEqual({
      exitCode: 1,
      stdout: "",
      lines: ["mnemo: QUERY: must not be empty"],
    });
  });

  test("--help still prints the help, exit 0", async () => {
    const result = await runCli(["memories", "list", "--help"]);
    expect({ exitCode: result.exitCode, usage: result.stdout.split("\n")[0], stderr: result.stderr }).toEqual({
      exitCode: 0,
      usage: "Usage: mnemo memories list [options]",
      stderr: "",
    });
  });
});

describe("output into a closed pipe (`mnemo memories list | head -3`)", () => {
  test("ends quietly: exit 0, no stack trace", async () => {
    const data = dataDir("epipe");
    // More than a pipe's buffer (64 KB), so writes go on after the reader has gone.
    const lines = Array.from({ length: 1000 }, (_, i) =>
      JSON.stringify({ content: `memory number ${i} with enough words to fill a line of the listing` }),
    );
    writeFileSync(join(root, "many.jsonl"), lines.join("\n"));
    expect((await runCli(["import", join(root, "many.jsonl"), "--user", "a", "--data", data])).exitCode).toBe(0);
    const proc = Bun.spawn(
      [
        process.execPath,
        join(import.meta.dir, "..", "cli", "mnemo.ts"),
        "memories",
        "list",
        "--user",
        "a",
        "--limit",
        "1000",
        "--data",
        data,
      ],
      {
        env: {
          PATH: process.env.PATH ?? "",
          HOME: process.env.HOME ?? "/tmp",
          EMBEDDINGS_PROVIDER: "none",
          ...(await databaseEnvFor(data)),
        },
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    const reader = proc.stdout.getReader();
    const first = await reader.read();
    await reader.cancel();
    const [stderr, exitCode] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    expect({ read: Boolean(first.value?.length), exitCode, stderr }).toEqual({ read: true, exitCode: 0, stderr: "" });
  });
});
