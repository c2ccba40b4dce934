import { afterAll, describe, expect, test } from "bun:test";
import { runCli } from "./helpers/cli";
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
const oneLineError = (result: { exitCode: number; stdout: string; stderr: string }) => ({ exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr });

describe("mnemo workspaces", () => {
  test("list, rename, then delete with --yes: the workspace and its content are gone; the other user's is untouched", async () => {
    const ws = await createWorkspace(server, "Finance", mock("cli-a"));
    const kept = await createWorkspace(server, "Home", mock("cli-a"));
    const bobs = await createWorkspace(server, "Finance", mock("cli-b"));
    await createDocument(server, ws, { title: "Budget", indexable_blocks: [{ id: "b1", content: "the budget" }] }, mock("cli-a"));
    await server.call("POST", "/v1/memories", { token: mock("cli-a"), body: { content: "taxes due in April", workspaceId: ws } });

    const listed = await cli(["workspaces", "list", "--user", "cli-a", "--json"]);
    expect(listed.json.map((w: { id: string; name: string }) => [w.id, w.name])).toEqual([[ws, "Finance"], [kept, "Home"]]);
    const table = await cli(["workspaces", "list", "--user", "cli-a"]);
    expect([table.exitCode, table.stdout.includes("Finance"), table.stdout.includes(kept)]).toEqual([0, true, true]);

    const renamed = await cli(["workspaces", "rename", ws, "Money", "--user", "cli-a", "--json"]);
    expect([renamed.exitCode, renamed.json.workspace.name]).toEqual([0, "Money"]);
    expect((await server.call("GET", `/v1/workspaces/${ws}`, { token: mock("cli-a") }))[1].workspace.name).toBe("Money");

    const deleted = await cli(["workspaces", "delete", ws, "--user", "cli-a", "--yes", "--json"]);
    expect({ exitCode: deleted.exitCode, json: deleted.json }).toEqual({
      exitCode: 0, json: { id: ws, deleted: true, removed: { documents: 1, threads: 0, messages: 0, files: 0, memories: 1, jobs: 0 } },
    });
    expect((await server.call("GET", `/v1/workspaces/${ws}`, { token: mock("cli-a") }))[0]).toBe(404);
    const [, memories] = await server.call("GET", "/v1/memories", { token: mock("cli-a") });
    expect(memories.data).toEqual([]);
    expect((await cli(["workspaces", "list", "--user", "cli-a", "--json"])).json.map((w: { id: string }) => w.id)).toEqual([kept]);
    expect((await server.call("GET", `/v1/workspaces/${bobs}`, { token: mock("cli-b") }))[0]).toBe(200);
  });

  test("delete off a terminal without --yes refuses, and deletes nothing", async () => {
    const ws = await createWorkspace(server, "Keep", mock("cli-c"));
    expect(oneLineError(await cli(["workspaces", "delete", ws, "--user", "cli-c"]))).toEqual({
      exitCode: 1, stdout: "", stderr: "mnemo: delete: not on a terminal, so nothing was asked; add --yes to delete for good\n",
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
    expect((await server.call("GET", `/v1/workspaces/${ws}`, { token: mock("cli-d") }))[1].workspace.name).toBe("Private");
  });

  test("--help shows examples", async () => {
    const help = await runCli(["workspaces", "delete", "--help"]);
    expect([help.exitCode, help.stdout.includes("mnemo workspaces delete ws_01J… --user alice"), help.stdout.includes("--yes")]).toEqual([0, true, true]);
  });
});
