import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { databaseEnvFor, dropDatabaseFor } from "./helpers/database";
import { callTool as call, errorOf, ok } from "./helpers/mcp";
import { startTestServer, tempDir } from "./helpers/server";
import { createWorkspace } from "./helpers/workspaces";

const ROOT = join(import.meta.dir, "..");
const CLI = join(ROOT, "cli", "mnemo.ts");
const open: Client[] = [];

/** The environment of `mnemo mcp`: given explicitly, with the data dir's database in the PostgreSQL run. */
async function envFor(dataDir: string): Promise<Record<string, string>> {
  return {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    EMBEDDINGS_PROVIDER: "none",
    ...(await databaseEnvFor(dataDir)),
  };
}

/** Starts `mnemo mcp` as a subprocess driven by the SDK's own stdio client. */
async function connectStdio(dataDir: string, user: string, extraArgs: string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "mcp", "--user", user, "--data", dataDir, ...extraArgs],
    env: await envFor(dataDir),
    cwd: ROOT,
    stderr: "pipe",
  });
  const client = new Client({ name: "mnemo-test", version: "1.0.0" });
  await client.connect(transport);
  open.push(client);
  return client;
}

let dataDir: string;
beforeAll(() => {
  dataDir = tempDir("mnemo-mcp-");
});
afterEach(async () => {
  for (const client of open.splice(0)) await client.close().catch(() => {});
});
afterAll(async () => {
  rmSync(dataDir, { recursive: true, force: true });
  await dropDatabaseFor(dataDir);
});

describe("mnemo mcp (stdio)", () => {
  test("lists tools; remember, recall, build_context, forget; invalid input is an error result", async () => {
    const client = await connectStdio(dataDir, "alice");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "accept_memory_proposal",
      "append_chat_message",
      "build_context",
      "extract_memories",
      "forget",
      "list_memories",
      "list_memory_proposals",
      "read_document",
      "recall",
      "reject_memory_proposal",
      "remember",
      "search_documents",
      "write_document",
    ]);
    expect(tools.find((t) => t.name === "remember")!.inputSchema).toMatchObject({
      required: ["content"],
      properties: { content: { type: "string" } },
    });

    const memory = ok(await call(client, "remember", { content: "Alice runs the Berlin marathon in September" }));
    expect(
      ok(await call(client, "recall", { query: "Berlin marathon" })).results.map((r: { id: string }) => r.id),
    ).toEqual([memory.id]);
    expect(ok(await call(client, "build_context", { query: "marathon" })).contextText).toBe(
      "## Relevant context\n- Alice runs the Berlin marathon in September",
    );

    expect(errorOf(await call(client, "recall", { query: "" })).error.code).toBe("invalid_request");
    expect(errorOf(await call(client, "forget", { id: "mem_missing" }))).toEqual({
      error: { code: "not_found", message: "memory 'mem_missing' not found" },
    });

    expect(ok(await call(client, "forget", { id: memory.id }))).toEqual({ id: memory.id, deleted: true });
    expect(ok(await call(client, "recall", { query: "Berlin marathon" })).results).toEqual([]);
  });

  test("a second user's process never sees the first user's memories", async () => {
    const alice = await connectStdio(dataDir, "alice");
    const bob = await connectStdio(dataDir, "bob");
    const memory = ok(
      await call(alice, "remember", { content: "Alice's bike lock combination is kept in the drawer" }),
    );
    expect(ok(await call(bob, "recall", { query: "bike lock combination drawer" })).results).toEqual([]);
    expect(ok(await call(bob, "list_memories", {})).memories).toEqual([]);
    expect(errorOf(await call(bob, "forget", { id: memory.id })).error.code).toBe("not_found");
    // One "MCP error <code>:" prefix, not two (the SDK's message would carry its own).
    await expect(bob.readResource({ uri: `mnemo://memories/${memory.id}` })).rejects.toThrow(
      `MCP error -32002: not_found: memory '${memory.id}' not found`,
    );
    await expect(bob.readResource({ uri: `mnemo://memories/${memory.id}` })).rejects.not.toThrow(
      /MCP error -32002: MCP error/,
    );
    expect(errorOf(await call(bob, "read_document", { document_id: "doc_x" }))).toEqual({
      error: { code: "invalid_request", message: "workspace_id: is required (or start `mnemo mcp` with --workspace)" },
    });
    expect(ok(await call(alice, "recall", { query: "bike lock" })).results.map((r: { id: string }) => r.id)).toEqual([
      memory.id,
    ]);
  });

  test("stdout carries only protocol messages, and the process exits cleanly when stdin closes", async () => {
    const proc = Bun.spawn([process.execPath, CLI, "mcp", "--user", "carol", "--data", dataDir], {
      cwd: ROOT,
      env: await envFor(dataDir),
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    const messages = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "remember", arguments: { content: "Carol prefers aisle seats" } },
      },
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "recall", arguments: { query: "aisle" } } },
      { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "remember", arguments: { content: "" } } },
      { jsonrpc: "2.0", id: 5, method: "resources/read", params: { uri: "mnemo://memories/mem_nope" } },
      { jsonrpc: "2.0", id: 6, method: "prompts/get", params: { name: "use-memory" } },
    ];
    // One at a time: each answer arrives before the next request, then stdin closes.
    const reader = proc.stdout.getReader();
    let stdout = "";
    for (const message of messages) {
      proc.stdin.write(`${JSON.stringify(message)}\n`);
      await proc.stdin.flush();
      if (!("id" in message)) continue;
      while (!stdout.includes(`"id":${message.id}`)) {
        const { value, done } = await reader.read();
        if (done) break;
        stdout += new TextDecoder().decode(value);
      }
    }
    await proc.stdin.end();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      stdout += new TextDecoder().decode(value);
    }
    const [exitCode, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
    const lines = stdout.split("\n").filter(Boolean);
    const parsed = lines.map((line) => JSON.parse(line));
    expect({
      exitCode,
      ids: parsed.map((m) => m.id),
      everyLineJsonRpc: parsed.every((m) => m.jsonrpc === "2.0"),
      stderr,
    }).toEqual({
      exitCode: 0,
      ids: [1, 2, 3, 4, 5, 6],
      everyLineJsonRpc: true,
      stderr: "",
    });
    expect(parsed[2].result.structuredContent.results).toHaveLength(1);
    expect(parsed[3].result.isError).toBe(true);
    expect(parsed[4].error.message).toContain("not_found");
  });

  test("--workspace must be the user's and becomes the default workspace", async () => {
    const server = await startTestServer({ dataDir: tempDir("mnemo-mcp-ws-") });
    try {
      const workspaceId = await createWorkspace(server, "Notes", "mock-token-dave");
      // The server holds the index writer lease on this data dir; the stdio process runs beside it.
      const client = await connectStdio(server.dataDir, "dave", ["--workspace", workspaceId]);
      const memory = ok(await call(client, "remember", { content: "Dave's project codename is Heron" }));
      expect(memory.workspaceId).toBe(workspaceId);
      const doc = ok(
        await call(client, "write_document", { title: "Heron", markdown: "Heron ships in March." }),
      ).document;
      expect(doc.workspace_id).toBe(workspaceId);
      // Writes from the stdio process become searchable, on the server and in the process.
      const [status, found] = await server.call("POST", "/v1/memories/search", {
        token: "mock-token-dave",
        body: { query: "codename Heron" },
      });
      expect([status, found.results.map((r: { id: string }) => r.id)]).toEqual([200, [memory.id]]);
      expect(ok(await call(client, "search_documents", { query: "Heron ships" })).items[0]).toMatchObject({
        documentId: doc.id,
      });
      // A memory written over REST is recalled by the stdio process.
      const [, viaRest] = await server.call("POST", "/v1/memories", {
        token: "mock-token-dave",
        body: { content: "Dave's standup is at 9:30" },
      });
      expect(ok(await call(client, "recall", { query: "standup" })).results.map((r: { id: string }) => r.id)).toEqual([
        viaRest.id,
      ]);

      const refused = Bun.spawnSync(
        [process.execPath, CLI, "mcp", "--user", "erin", "--data", server.dataDir, "--workspace", workspaceId],
        {
          cwd: ROOT,
          env: await envFor(server.dataDir),
          stdin: "ignore",
        },
      );
      expect({
        exitCode: refused.exitCode,
        stdout: refused.stdout.toString(),
        stderr: refused.stderr.toString(),
      }).toEqual({
        exitCode: 1,
        stdout: "",
        stderr: expect.stringContaining(`--workspace: workspace '${workspaceId}' not found for user 'erin'`),
      });
    } finally {
      for (const client of open.splice(0)) await client.close().catch(() => {});
      await server.destroy();
    }
  });
});
