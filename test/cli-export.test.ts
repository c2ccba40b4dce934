import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { cliDataDirs, killSpawnedServers, runCli, spawnServer } from "./helpers/cli";

afterEach(killSpawnedServers);
const { root, dataDir } = cliDataDirs("mnemo-cli-export-");

const client =
  (url: string) =>
  async (method: string, path: string, user: string, body?: unknown): Promise<[number, any]> => {
    const response = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer mock-token-${user}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return [response.status, text ? JSON.parse(text) : null];
  };

// 1.6 MB: two blob rows, so two file_data lines.
const FILE_BYTES = "name,age\nada,36\n".repeat(100_000);

/** Fills a data dir through the HTTP API with one of every kind of record, for alice and (a little) for bob. */
async function seed(dir: string) {
  const server = await spawnServer(["--data", dir, "--allow-mock-tokens"]);
  const call = client(server.url);
  const ok = (result: [number, any], status = 200) => {
    expect(result[0] === status ? status : result).toBe(status);
    return result[1];
  };
  const ws: string = ok(await call("POST", "/v1/workspaces", "alice", { name: "Research" }), 201).id;
  ok(
    await call("POST", "/v1/memories", "alice", {
      content: "first in a session",
      session_id: "s1",
      metadata: { n: 1 },
    }),
    201,
  );
  ok(
    await call("POST", "/v1/memories", "alice", { content: "second in a session", session_id: "s1", workspace_id: ws }),
    201,
  );
  ok(
    await call("POST", `/v1/workspaces/${ws}/documents`, "alice", {
      title: "Owls",
      markdown: "# Owls\n\nThey hunt [[Voles]].",
      metadata: { tags: ["birds"] },
      indexable_blocks: [{ id: "b1", type: "text", content: "They hunt [[Voles]]." }],
    }),
    201,
  );
  ok(
    await call("POST", `/v1/workspaces/${ws}/notes`, "alice", {
      documentPayload: { title: "Legacy" },
      blocksPayload: [{ id: "x" }],
      markdown: "legacy note",
    }),
    201,
  );
  ok(await call("POST", `/v1/workspaces/${ws}/notebooks`, "alice", { ciphertext: "iv:tag:ct" }));
  const thread = ok(
    await call("POST", `/v1/workspaces/${ws}/chats`, "alice", { title: "Chat", metadata: { a: 1 } }),
    201,
  );
  ok(
    await call("POST", `/v1/workspaces/${ws}/chats/${thread.id}/messages`, "alice", {
      role: "user",
      content: "hello owls",
    }),
    201,
  );
  ok(
    await call("POST", `/v1/workspaces/${ws}/chats/${thread.id}/messages`, "alice", {
      role: "assistant",
      content: "hello human",
    }),
    201,
  );
  const upload = ok(
    await call("POST", `/v1/workspaces/${ws}/files/upload-url`, "alice", {
      filename: "people.csv",
      contentType: "text/csv",
    }),
  );
  const put = await fetch(upload.url, { method: "PUT", headers: { "content-type": "text/csv" }, body: FILE_BYTES });
  expect(put.status).toBe(201);
  ok(await call("POST", "/v1/memories", "bob", { content: "bob's own memory" }), 201);
  server.proc.kill("SIGTERM");
  await server.proc.exited;
  return { ws, thread: thread.id as string, fileKey: upload.key as string };
}

describe("mnemo export", () => {
  test("export → import into an empty data dir → export again is byte-identical, files included; the restored server serves it", async () => {
    const source = dataDir("source");
    const { ws, fileKey } = await seed(source);

    const first = join(root, "alice-1.jsonl");
    const exported = await runCli([
      "export",
      "--user",
      "alice",
      "--out",
      first,
      "--with-files",
      "--json",
      "--data",
      source,
    ]);
    expect(exported.exitCode).toBe(0);
    expect(JSON.parse(exported.stdout).records).toEqual({
      workspace: 1,
      workspace_artifact: 1,
      memory: 2,
      document: 2,
      indexed_document: 1,
      chat_thread: 1,
      chat_message: 2,
      file: 1,
      file_block: expect.any(Number),
      file_data: 1,
    });
    const lines = readFileSync(first, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines[0]).toEqual({ type: "header", format: "mnemo-export", version: 1, userId: "alice" });
    // Nothing of bob's, and no internal pointers.
    expect(readFileSync(first, "utf8")).not.toContain("bob's own memory");
    expect(lines.find((l) => l.type === "file")).toEqual({
      type: "file",
      workspace_id: ws,
      key: fileKey,
      name: "people.csv",
      content_type: "text/csv",
      size: FILE_BYTES.length,
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      created_at: expect.any(String),
      updated_at: expect.any(String),
      sealed: 0,
    });

    const target = dataDir("target");
    const imported = await runCli(["import", first, "--user", "alice", "--json", "--data", target]);
    expect(imported.exitCode).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ format: "mnemo-export", failed: 0, existing: 0, fileBytes: 1 });

    const second = join(root, "alice-2.jsonl");
    expect(
      (await runCli(["export", "--user", "alice", "--out", second, "--with-files", "--data", target])).exitCode,
    ).toBe(0);
    expect(readFileSync(second).equals(readFileSync(first))).toBe(true);

    // Importing again changes nothing.
    const rerun = JSON.parse((await runCli(["import", first, "--user", "alice", "--json", "--data", target])).stdout);
    expect([rerun.inserted, rerun.failed, rerun.existing > 0]).toEqual([0, 0, true]);

    const server = await spawnServer(["--data", target, "--allow-mock-tokens"]);
    const call = client(server.url);
    const [, memories] = await call("GET", "/v1/memories", "alice");
    const original = lines.filter((l) => l.type === "memory");
    expect(memories.data.map((m: any) => [m.id, m.createdAt, m.session_id]).sort()).toEqual(
      original.map((m) => [m.id, m.created_at, m.session_id]).sort(),
    );
    const download = await fetch(`${server.url}/v1/workspaces/${ws}/files/${fileKey}`, {
      headers: { authorization: "Bearer mock-token-alice" },
    });
    expect([download.status, await download.text()]).toEqual([200, FILE_BYTES]);
    const [, hits] = await call("POST", "/v1/documents/query", "alice", { query: "owls", workspace_id: ws });
    expect([...new Set(hits.items.map((i: any) => i.type))].sort()).toEqual(["block", "message"]);
    const [, bobs] = await call("GET", "/v1/memories", "bob");
    expect(bobs.data).toEqual([]);
  });

  test("a file exported without --with-files keeps its metadata; its download is a 409 naming the key, never a cut-off 200", async () => {
    const source = dataDir("nobytes-source");
    const { ws, fileKey } = await seed(source);
    const out = join(root, "alice-nobytes.jsonl");
    expect((await runCli(["export", "--user", "alice", "--out", out, "--data", source])).exitCode).toBe(0);
    const target = dataDir("nobytes-target");
    expect((await runCli(["import", out, "--user", "alice", "--data", target])).exitCode).toBe(0);
    const server = await spawnServer(["--data", target, "--allow-mock-tokens"]);
    const headers = { authorization: "Bearer mock-token-alice" };
    const listed = (await (await fetch(`${server.url}/v1/workspaces/${ws}/files`, { headers })).json()) as {
      files: Array<{ key: string }>;
    };
    expect(listed.files.map((f) => f.key)).toEqual([fileKey]);
    const download = await fetch(`${server.url}/v1/workspaces/${ws}/files/${fileKey}`, { headers });
    const body = (await download.json()) as { error: { code: string; message: string } };
    expect([download.status, body.error.code, body.error.message]).toEqual([
      409,
      "conflict",
      expect.stringContaining(fileKey),
    ]);
  });

  test("--out - writes to stdout; an unknown user exports only the header", async () => {
    const dir = dataDir("empty");
    const result = await runCli(["export", "--user", "nobody", "--out", "-", "--data", dir]);
    expect([result.exitCode, result.stdout]).toEqual([
      0,
      `${JSON.stringify({ type: "header", format: "mnemo-export", version: 1, userId: "nobody" })}\n`,
    ]);
    expect(result.stderr).toContain("exported nothing");
  });
});
