import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliDataDirs, killSpawnedServers, runCli, spawnServer } from "./helpers/cli";

afterEach(killSpawnedServers);
const { root, dataDir } = cliDataDirs("mnemo-cli-import-");

function write(name: string, text: string): string {
  const path = join(root, name);
  writeFileSync(path, text);
  return path;
}

/** `[status, body]` of a JSON request to a spawned server as `user` (mock tokens). */
const client =
  (url: string) =>
  async (method: string, path: string, user: string, body?: unknown): Promise<[number, any]> => {
    const response = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer mock-token-${user}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return [response.status, await response.json()];
  };

const importJson = async (path: string, data: string, ...extra: string[]) => {
  const result = await runCli(["import", path, "--user", "alice", "--json", ...extra, "--data", data]);
  return { exitCode: result.exitCode, report: JSON.parse(result.stdout || "null"), stderr: result.stderr };
};

describe("mnemo import: memory formats", () => {
  test("mem0 export, mem0 get_all (list and {results}), Supermemory and {content} lines; re-runs add nothing; bad lines are named", async () => {
    const data = dataDir("formats");
    const mem0 = write(
      "mem0.json",
      JSON.stringify(
        {
          memories: [
            {
              id: "0b0f6a86-9a4e-4c6e-9d3f-1c1f1d7a0001",
              memory: "Likes pistachio ice cream",
              metadata: { source: "chat" },
              categories: ["food"],
              created_at: "2024-07-20T01:56:42.117604-07:00",
              user_id: "a",
            },
            {
              id: "0b0f6a86-9a4e-4c6e-9d3f-1c1f1d7a0002",
              memory: "Lives in Lisbon",
              created_at: "2024-07-21T10:00:00Z",
              run_id: "run-1",
            },
          ],
        },
        null,
        2,
      ),
    );
    const getAll = write(
      "get-all.json",
      JSON.stringify([{ id: "m-3", memory: "Plays the cello", hash: "x", created_at: "2024-08-01T00:00:00Z" }]),
    );
    const results = write("results.json", JSON.stringify({ results: [{ id: "m-4", memory: "Allergic to cats" }] }));
    const supermemory = write(
      "supermemory.json",
      JSON.stringify({
        documents: [
          {
            id: "sm_1",
            customId: "c1",
            content: "Quarterly report draft is due Friday",
            title: "Report",
            containerTags: ["work"],
            createdAt: "2025-01-02T03:04:05.000Z",
          },
        ],
      }),
    );
    const lines = write(
      "lines.jsonl",
      `${[
        JSON.stringify({ content: "Owls hunt at night", metadata: { topic: "birds" } }),
        "{not json",
        JSON.stringify({ content: "   " }),
        JSON.stringify({ text: "no content field" }),
        JSON.stringify({ content: "Herons wade in shallow water" }),
      ].join("\n")}\n`,
    );

    const first = await importJson(mem0, data);
    expect(first).toEqual({
      exitCode: 0,
      stderr: expect.any(String),
      report: expect.objectContaining({ format: "mem0-export", read: 2, inserted: 2, existing: 0, failed: 0 }),
    });
    for (const [path, format] of [
      [getAll, "mem0-get-all"],
      [results, "mem0-get-all"],
      [supermemory, "supermemory"],
    ]) {
      const r = await importJson(path, data);
      expect([r.exitCode, r.report.format, r.report.inserted]).toEqual([0, format, 1]);
    }
    const mixed = await importJson(lines, data);
    expect(mixed.exitCode).toBe(3);
    expect(mixed.report).toMatchObject({ format: "content-lines", read: 5, inserted: 2, failed: 3 });
    expect(mixed.report.problems).toEqual([
      { place: "line 2", message: expect.stringContaining("not JSON") },
      { place: "line 3", message: "content: must not be blank" },
      { place: "line 4", message: "content: is required (a string)" },
    ]);

    // Human output: the problems on stderr with line numbers, a summary on stdout.
    const again = await runCli(["import", lines, "--user", "alice", "--data", data]);
    expect(again.exitCode).toBe(3);
    expect(again.stderr).toContain("lines.jsonl: line 2: not JSON");
    expect(again.stdout).toContain("imported 0 new (nothing new), 2 already present, 3 failed of 5 read");
    const rerun = await importJson(mem0, data);
    expect(rerun.report).toMatchObject({ inserted: 0, existing: 2, failed: 0 });

    const server = await spawnServer(["--data", data, "--allow-mock-tokens"]);
    const call = client(server.url);
    const [status, list] = await call("GET", "/v1/memories?limit=100", "alice");
    expect(status).toBe(200);
    const byContent = Object.fromEntries(list.data.map((m: any) => [m.content, m]));
    expect(Object.keys(byContent).sort()).toEqual([
      "Allergic to cats",
      "Herons wade in shallow water",
      "Likes pistachio ice cream",
      "Lives in Lisbon",
      "Owls hunt at night",
      "Plays the cello",
      "Quarterly report draft is due Friday",
    ]);
    expect(byContent["Likes pistachio ice cream"]).toMatchObject({
      id: "0b0f6a86-9a4e-4c6e-9d3f-1c1f1d7a0001",
      metadata: { source: "chat", categories: ["food"] },
      createdAt: "2024-07-20T08:56:42.117Z",
    });
    expect(byContent["Lives in Lisbon"].session_id).toBe("run-1");
    expect(byContent["Quarterly report draft is due Friday"].metadata).toEqual({
      title: "Report",
      containerTags: ["work"],
      customId: "c1",
    });
    // Imported memories reach the search index once the server drains the outbox.
    const [, found] = await call("POST", "/v1/memories/search", "alice", { query: "cello" });
    expect(found.results.map((m: any) => m.content)).toEqual(["Plays the cello"]);
    // Another user sees none of it.
    const [, other] = await call("GET", "/v1/memories", "bob");
    expect(other.data).toEqual([]);
    const [missing] = await call("GET", "/v1/memories/m-3", "bob");
    expect(missing).toBe(404);
  });

  test("--workspace puts memories there (creating it); another user's workspace is refused", async () => {
    const data = dataDir("workspace");
    const lines = write("ws.jsonl", `${JSON.stringify({ content: "in a workspace" })}\n`);
    const r = await importJson(lines, data, "--workspace", "ws_alice_import");
    expect([r.exitCode, r.report.workspaceId, r.report.inserted]).toEqual([0, "ws_alice_import", 1]);
    const refused = await runCli(["import", lines, "--user", "bob", "--workspace", "ws_alice_import", "--data", data]);
    expect([refused.exitCode, refused.stderr.trim()]).toEqual([
      1,
      "mnemo: --workspace: 'ws_alice_import' belongs to another user",
    ]);
    const missing = await runCli(["import", join(root, "nope.jsonl"), "--user", "bob", "--data", data]);
    expect([missing.exitCode, missing.stderr]).toEqual([1, expect.stringContaining("no such file or folder")]);
  });
});

describe("mnemo import: the web app's export", () => {
  test("is its own format: ids, workspaces, sessions and times kept; the summary counts in plurals", async () => {
    const data = dataDir("app-export");
    expect(
      (
        await runCli([
          "import",
          write("ws.jsonl", `${JSON.stringify({ content: "makes the workspace" })}\n`),
          "--user",
          "alice",
          "--workspace",
          "ws_app",
          "--data",
          data,
        ])
      ).exitCode,
    ).toBe(0);
    const memory = (id: string, content: string, workspaceId: string | null) => ({
      id,
      ownerId: "someone-else",
      projectId: workspaceId ?? "default",
      content,
      metadata: { from: "app" },
      status: "active",
      workspaceId,
      session_id: "s-1",
      createdAt: "2025-02-03T04:05:06.000Z",
      updatedAt: "2025-02-03T04:05:06.000Z",
    });
    const path = write(
      "mnemo-memories-2025-02-03.json",
      JSON.stringify(
        {
          exportedAt: "2025-02-03T10:00:00.000Z",
          filters: {},
          count: 2,
          memories: [
            memory("mem_01APPEXPORT000000000000001", "Exported from the app", null),
            memory("mem_01APPEXPORT000000000000002", "In a workspace", "ws_app"),
          ],
        },
        null,
        2,
      ),
    );
    const result = await runCli(["import", path, "--user", "alice", "--data", data]);
    expect({ exitCode: result.exitCode, stdout: result.stdout }).toEqual({
      exitCode: 0,
      stdout:
        "imported 2 new (2 memories), 0 already present, 0 failed of 2 read (Mnemo web app export)\n" +
        // Both, and the first again: one session, so the second is context of the first.
        "3 sources queued for the search index; a running server (or the next mnemo serve) indexes them\n",
    });
    const server = await spawnServer(["--data", data, "--allow-mock-tokens"]);
    const [, list] = await client(server.url)("GET", "/v1/memories?limit=10", "alice");
    expect(
      list.data
        .filter((m: any) => m.id.startsWith("mem_01APPEXPORT"))
        .map((m: any) => [m.id, m.content, m.workspaceId, m.session_id, m.createdAt, m.metadata])
        .sort(),
    ).toEqual([
      [
        "mem_01APPEXPORT000000000000001",
        "Exported from the app",
        null,
        "s-1",
        "2025-02-03T04:05:06.000Z",
        { from: "app" },
      ],
      [
        "mem_01APPEXPORT000000000000002",
        "In a workspace",
        "ws_app",
        "s-1",
        "2025-02-03T04:05:06.000Z",
        { from: "app" },
      ],
    ]);
  });
});

describe("mnemo import: a file in no known format", () => {
  const KNOWN =
    'known formats: a Mnemo export (mnemo export) or the web app\'s export, ChatGPT\'s or Claude\'s data export (conversations.json or its zip), mem0\'s export {"memories": […]} or get_all [{"memory": …}] / {"results": […]}, ' +
    'Supermemory\'s export {"documents"|"memories": […]}, JSON Lines of {"content": …}, or a folder of Markdown files';

  test.each([
    ["notes.txt", "hello\nworld\n", `format not recognised: it is neither JSON nor JSON Lines; ${KNOWN}`],
    [
      "settings.json",
      '{\n  "theme": "dark"\n}\n',
      `format not recognised: it is a JSON object with none of "memories", "results", "documents", "content" or "memory"; ${KNOWN}`,
    ],
    [
      "rows.json",
      '[{"title": "a"}, {"title": "b"}]',
      `format not recognised: it is a JSON list whose entries have neither "content" nor "memory"; ${KNOWN}`,
    ],
    [
      "events.jsonl",
      '{"event": "a"}\n{"event": "b"}\n',
      `format not recognised: no line is a Mnemo export record or has "content" or "memory"; ${KNOWN}`,
    ],
    ["empty.jsonl", "", "the file is empty; nothing to import"],
    ["blank.json", " \n\n", "the file is empty; nothing to import"],
  ])("%s: exit 1, one line saying why; nothing is written, not even the --workspace", async (name, text, message) => {
    const data = dataDir(`unknown-${name}`);
    const path = write(name, text);
    const result = await runCli(["import", path, "--user", "alice", "--workspace", "ws_unknown", "--data", data]);
    expect({
      exitCode: result.exitCode,
      stdout: result.stdout,
      stderr: result.stderr.replace(/^importing.*\n/gm, ""),
    }).toEqual({
      exitCode: 1,
      stdout: "",
      stderr: `mnemo: ${path}: ${message}\n`,
    });
    const server = await spawnServer(["--data", data, "--allow-mock-tokens"]);
    const [status] = await client(server.url)("GET", "/v1/workspaces/ws_unknown", "alice");
    expect(status).toBe(404);
  });
});

describe("mnemo import: a Markdown folder", () => {
  test("an Obsidian vault becomes documents: titles, front-matter metadata, [[links]] as block edges; idempotent", async () => {
    const data = dataDir("vault");
    const vault = join(root, "Vault");
    mkdirSync(join(vault, "daily"), { recursive: true });
    mkdirSync(join(vault, ".obsidian"), { recursive: true });
    writeFileSync(join(vault, ".obsidian", "app.json"), "{}");
    writeFileSync(
      join(vault, "Owls.md"),
      "---\ntags: [birds, night]\nstatus: draft\naliases:\n  - Strigiformes\n---\n# All about owls\n\nOwls hunt voles at night.\n",
    );
    writeFileSync(
      join(vault, "daily", "2024-05-01.md"),
      "Saw an owl today, see [[Owls]] and [[Missing note|missing]].\n",
    );
    writeFileSync(join(vault, "Plain.md"), "No heading here.\n");

    const first = await importJson(vault, data);
    const ws: string = first.report.workspaceId;
    expect(first.exitCode).toBe(0);
    expect(ws).toMatch(/^ws_md_/);
    expect(first.report).toMatchObject({ format: "markdown", read: 3, inserted: 3, existing: 0, failed: 0 });
    const again = await importJson(vault, data);
    expect(again.report).toMatchObject({ inserted: 0, existing: 3, workspaceId: ws });

    const server = await spawnServer(["--data", data, "--allow-mock-tokens"]);
    const call = client(server.url);
    const [wsStatus, workspace] = await call("GET", `/v1/workspaces/${ws}`, "alice");
    expect([wsStatus, workspace.workspace?.name]).toEqual([200, "Vault"]);
    const [, list] = await call("GET", `/v1/workspaces/${ws}/documents`, "alice");
    expect(list.documents.map((d: any) => d.title).sort()).toEqual(["2024-05-01", "All about owls", "Plain"]);
    const owls = list.documents.find((d: any) => d.title === "All about owls");
    expect(owls._meta).toEqual({
      tags: ["birds", "night"],
      status: "draft",
      aliases: ["Strigiformes"],
      path: "Owls.md",
    });
    const [, full] = await call("GET", `/v1/workspaces/${ws}/documents/${owls.id}`, "alice");
    expect(full.document.markdown).toBe("# All about owls\n\nOwls hunt voles at night.\n");

    const [, edges] = await call("GET", `/v1/workspaces/${ws}/graph/block-edges`, "alice");
    const daily = list.documents.find((d: any) => d.title === "2024-05-01");
    expect(edges.edges).toEqual([
      {
        type: "wiki_link",
        from: { documentId: daily.id, blockId: "md-1" },
        to: { documentId: owls.id, blockId: null },
        target: "All about owls",
      },
      {
        type: "wiki_link",
        from: { documentId: daily.id, blockId: "md-1" },
        to: { documentId: null, blockId: null },
        target: "Missing note",
      },
    ]);
    const [, hits] = await call("POST", "/v1/documents/query", "alice", { query: "voles", workspace_id: ws });
    expect(hits.items.map((item: any) => item.documentId)).toContain(owls.id);
    const [hidden] = await call("GET", `/v1/workspaces/${ws}/documents`, "bob");
    expect(hidden).toBe(404);
  });
});
