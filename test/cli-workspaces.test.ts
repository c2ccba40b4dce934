import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { runCli } from "./helpers/cli";
import { databaseEnvFor } from "./helpers/database";
import { mock, startTestServer } from "./helpers/server";
import { createDocument, createWorkspace } from "./helpers/workspaces";

// A server on the data dir the commands use: the commands work beside it, on the same store.
const server = await startTestServer();
afterAll(() => server.destroy());

const cli = async (args: string[]) => {
  const result = await runCli([...args, "--data", server.dataDir]);
  let json: any = null;
  try {
    json = JSON.parse(result.stdout);
  } catch {}
  return { ...result, json };
};

/** What a failed command printed: compared whole, so an expected failure shows as exit 1, one line on stderr and nothing on stdout. */
const oneLineError = (result: { exitCode: number; stdout: string; stderr: string }) => ({
  exitCode: result.exitCode,
  stdout: result.stdout,
  stderr: result.stderr,
});

describe("mnemo workspaces", () => {
  test("list, rename, then delete with --yes: the workspace and its content are gone; the other user's is untouched", async () => {
    const ws = await createWorkspace(server, "Finance", mock("cli-a"));
    const kept = await createWorkspace(server, "Home", mock("cli-a"));
    const bobs = await createWorkspace(server, "Finance", mock("cli-b"));
    await createDocument(
      server,
      ws,
      { title: "Budget", indexable_blocks: [{ id: "b1", content: "the budget" }] },
      mock("cli-a"),
    );
    await server.call("POST", "/v1/memories", {
      token: mock("cli-a"),
      body: { content: "taxes due in April", workspaceId: ws },
    });

    const listed = await cli(["workspaces", "list", "--user", "cli-a", "--json"]);
    expect(listed.json.map((w: { id: string; name: string }) => [w.id, w.name])).toEqual([
      [ws, "Finance"],
      [kept, "Home"],
    ]);
    const table = await cli(["workspaces", "list", "--user", "cli-a"]);
    expect([table.exitCode, table.stdout.includes("Finance"), table.stdout.includes(kept)]).toEqual([0, true, true]);

    const renamed = await cli(["workspaces", "rename", ws, "Money", "--user", "cli-a", "--json"]);
    expect([renamed.exitCode, renamed.json.workspace.name]).toEqual([0, "Money"]);
    expect((await server.call("GET", `/v1/workspaces/${ws}`, { token: mock("cli-a") }))[1].workspace.name).toBe(
      "Money",
    );

    const deleted = await cli(["workspaces", "delete", ws, "--user", "cli-a", "--yes", "--json"]);
    expect({ exitCode: deleted.exitCode, json: deleted.json }).toEqual({
      exitCode: 0,
      json: {
        id: ws,
        deleted: true,
        removed: { documents: 1, threads: 0, messages: 0, files: 0, memories: 1, jobs: 0 },
      },
    });
    expect((await server.call("GET", `/v1/workspaces/${ws}`, { token: mock("cli-a") }))[0]).toBe(404);
    const [, memories] = await server.call("GET", "/v1/memories", { token: mock("cli-a") });
    expect(memories.data).toEqual([]);
    expect(
      (await cli(["workspaces", "list", "--user", "cli-a", "--json"])).json.map((w: { id: string }) => w.id),
    ).toEqual([kept]);
    expect((await server.call("GET", `/v1/workspaces/${bobs}`, { token: mock("cli-b") }))[0]).toBe(200);
  });

  test("delete off a terminal without --yes refuses, and deletes nothing", async () => {
    const ws = await createWorkspace(server, "Keep", mock("cli-c"));
    expect(oneLineError(await cli(["workspaces", "delete", ws, "--user", "cli-c"]))).toEqual({
      exitCode: 1,
      stdout: "",
      stderr: "mnemo: delete: not on a terminal, so nothing was asked; add --yes to delete for good\n",
    });
    expect((await server.call("GET", `/v1/workspaces/${ws}`, { token: mock("cli-c") }))[0]).toBe(200);
  });

  test("another user's workspace is not found, in one line; so is a blank name", async () => {
    const ws = await createWorkspace(server, "Private", mock("cli-d"));
    expect({
      delete: oneLineError(await cli(["workspaces", "delete", ws, "--user", "cli-e", "--yes"])),
      rename: oneLineError(await cli(["workspaces", "rename", ws, "Mine", "--user", "cli-e"])),
      blank: oneLineError(await cli(["workspaces", "rename", ws, " ", "--user", "cli-d"])),
    }).toEqual({
      delete: { exitCode: 1, stdout: "", stderr: `mnemo: workspace '${ws}' not found\n` },
      rename: { exitCode: 1, stdout: "", stderr: `mnemo: workspace '${ws}' not found\n` },
      blank: { exitCode: 1, stdout: "", stderr: "mnemo: NAME: must not be blank\n" },
    });
    expect((await server.call("GET", `/v1/workspaces/${ws}`, { token: mock("cli-d") }))[1].workspace.name).toBe(
      "Private",
    );
  });

  // util-linux `script` gives the command a terminal, so it asks; the answer is typed into it.
  const SCRIPT = Bun.which("script");
  test.skipIf(!SCRIPT)("on a terminal, delete says what goes and asks: no keeps it, yes deletes it", async () => {
    const ws = await createWorkspace(server, "Finance", mock("cli-t"));
    await createDocument(server, ws, { title: "Budget", indexable_blocks: [] }, mock("cli-t"));
    await server.call("POST", "/v1/memories", {
      token: mock("cli-t"),
      body: { content: "rent is due", workspaceId: ws },
    });
    const onTerminal = async (answer: string) => {
      const command = `${process.execPath} ${join(import.meta.dir, "..", "cli", "mnemo.ts")} workspaces delete ${ws} --user cli-t --data ${server.dataDir}`;
      const proc = Bun.spawn([SCRIPT!, "-qec", command, "/dev/null"], {
        env: {
          PATH: process.env.PATH ?? "",
          HOME: process.env.HOME ?? "/tmp",
          EMBEDDINGS_PROVIDER: "none",
          NO_COLOR: "1",
          ...(await databaseEnvFor(server.dataDir)),
        },
        stdin: "pipe",
        stdout: "pipe",
        stderr: "pipe",
      });
      proc.stdin.write(`${answer}\n`);
      proc.stdin.end();
      const [output, exitCode] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
      return {
        exitCode,
        asked: output.includes(
          "Delete workspace 'Finance'? Its 1 document, 0 chats, 0 files and 1 memory are deleted for good. [y/N]",
        ),
        output,
      };
    };
    const no = await onTerminal("n");
    expect([no.exitCode, no.asked, no.output.includes("nothing deleted")]).toEqual([0, true, true]);
    expect((await server.call("GET", `/v1/workspaces/${ws}`, { token: mock("cli-t") }))[0]).toBe(200);
    const yes = await onTerminal("y");
    expect([yes.exitCode, yes.asked, yes.output.includes(ws)]).toEqual([0, true, true]);
    expect((await server.call("GET", `/v1/workspaces/${ws}`, { token: mock("cli-t") }))[0]).toBe(404);
  });

  test("--help shows examples", async () => {
    const help = await runCli(["workspaces", "delete", "--help"]);
    expect([
      help.exitCode,
      help.stdout.includes("mnemo workspaces delete ws_01J… --user alice"),
      help.stdout.includes("--yes"),
    ]).toEqual([0, true, true]);
  });
});
