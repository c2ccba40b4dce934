import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { WEB_DIST } from "../scripts/build-app";
import { buildBinary } from "../scripts/build-binary";
import { databaseEnvFor, dropDatabaseFor } from "./helpers/database";
import { callTool, ok } from "./helpers/mcp";
import { pdfBomb, textPdf, waitForText } from "./helpers/pdf";
import { writeTinyModel } from "./helpers/tiny-model";
import { tempDir } from "./helpers/server";
import { waitFor } from "./helpers/wait";

const root = tempDir("mnemo-binary-");
const servers = new Set<Bun.Subprocess>();
const dataDirs: string[] = [];
let binary = "";
const linux = process.platform === "linux";

beforeAll(async () => {
  if (!linux) return;
  // Built once for every test here; each test copies it alone into an empty dir.
  binary = (await buildBinary({ entry: "cli/mnemo.ts", outfile: join(root, "build", "mnemo") })).outfile;
});
afterEach(() => {
  // A failed assertion must not leave a server running.
  for (const proc of servers) if (proc.exitCode === null) proc.kill("SIGKILL");
  servers.clear();
});
afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
  for (const dir of dataDirs) await dropDatabaseFor(dir);
});

/** A fresh dir holding nothing but a copy of the binary: nothing from the repo can be loaded. */
function aloneInEmptyDir(name: string): { dir: string; mnemo: string } {
  const dir = join(root, name);
  mkdirSync(dir);
  const mnemo = join(dir, "mnemo");
  copyFileSync(binary, mnemo);
  return { dir, mnemo };
}

/**
 * A minimal environment, a private TMPDIR (where the binary extracts native modules) and,
 * in the PostgreSQL run, the data dir's own database.
 */
async function binaryEnv(dataDir: string, extra: Record<string, string> = {}) {
  dataDirs.push(dataDir);
  const tmp = join(root, `tmp-${dataDirs.length}`);
  mkdirSync(tmp);
  return {
    PATH: "/usr/bin:/bin",
    HOME: root,
    TMPDIR: tmp,
    MNEMO_DATA_DIR: dataDir,
    MNEMO_LOG_LEVEL: "warn",
    ...(await databaseEnvFor(dataDir)),
    ...extra,
  };
}

async function serve(binaryPath: string, cwd: string, env: Record<string, string>, flags: string[] = []) {
  const proc = Bun.spawn([binaryPath, "serve", "--port", "0", ...flags], { cwd, env, stdout: "pipe", stderr: "pipe" });
  servers.add(proc);
  const reader = proc.stdout.getReader();
  let out = "";
  while (!/listening on (\S+)/.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`binary exited: ${await new Response(proc.stderr).text()}`);
    out += new TextDecoder().decode(value);
  }
  return { proc, url: /listening on (\S+)/.exec(out)![1] };
}

function run(binaryPath: string, args: string[], cwd: string, env: Record<string, string>) {
  const result = Bun.spawnSync([binaryPath, ...args], { cwd, env });
  return { exitCode: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

describe("the compiled binary", () => {
  test.skipIf(!linux)(
    "mnemo mcp on stdio, as an assistant starts it (the Claude Desktop snippet): tools listed, remember and recall",
    async () => {
      const { dir, mnemo } = aloneInEmptyDir("mcp");
      const dataDir = join(dir, "data");
      const transport = new StdioClientTransport({
        command: mnemo,
        args: ["mcp", "--user", "alice", "--data", dataDir],
        env: await binaryEnv(dataDir, { EMBEDDINGS_PROVIDER: "none" }),
        cwd: dir,
        stderr: "pipe",
      });
      const client = new Client({ name: "binary-test", version: "1.0.0" });
      await client.connect(transport);
      try {
        expect((await client.listTools()).tools.map((t) => t.name)).toContain("remember");
        const memory = ok(await callTool(client, "remember", { content: "the binary remembers the lighthouse" }));
        expect(
          ok(await callTool(client, "recall", { query: "lighthouse" })).results.map((r: { id: string }) => r.id),
        ).toEqual([memory.id]);
      } finally {
        await client.close();
      }
    },
  );

  test.skipIf(!linux)(
    "alone in an empty dir: serve on an empty data dir, an API key, memories, a file, export, clean stop",
    async () => {
      const { dir, mnemo } = aloneInEmptyDir("alone");
      expect(readdirSync(dir)).toEqual(["mnemo"]);
      const dataDir = join(dir, "data");
      const env = await binaryEnv(dataDir, { EMBEDDINGS_PROVIDER: "none" });
      const server = await serve(mnemo, dir, env);

      const created = run(mnemo, ["keys", "create", "--user", "alice", "--name", "ci", "--json"], dir, env);
      expect([created.exitCode, created.stderr]).toEqual([0, ""]);
      const { key } = JSON.parse(created.stdout) as { key: string };
      const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
      const call = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(`${server.url}${path}`, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return [response.status, await response.json()] as [number, any];
      };

      const [memoryStatus, memory] = await call("POST", "/v1/memories", {
        content: "the binary keeps my notes about lighthouses",
      });
      expect(memoryStatus).toBe(201);
      // The index catches up asynchronously: ask again until it has (bounded by the test timeout).
      let found: string[] = [];
      while (!found.includes(memory.id)) {
        const [status, body] = await call("POST", "/v1/memories/search", { query: "lighthouses", limit: 5 });
        expect(status).toBe(200);
        found = body.results.map((r: { id: string }) => r.id);
        if (!found.includes(memory.id)) await Bun.sleep(50);
      }
      // Indexed too, by the binary's own index-writer child (`mnemo __index-writer`), not only found pending.
      await waitFor(async () => (await call("GET", "/health"))[1].index?.pending === 0, {
        what: "the binary's index writer to catch up",
      });
      const [healthStatus, health] = await call("GET", "/health");
      expect([healthStatus, health.index.status]).toEqual([200, "ok"]);

      const [wsStatus, workspace] = await call("POST", "/v1/workspaces", { name: "Binary" });
      expect(wsStatus).toBe(201);
      const [urlStatus, upload] = await call("POST", `/v1/workspaces/${workspace.id}/files/upload-url`, {
        filename: "blob.bin",
        contentType: "application/octet-stream",
      });
      expect(urlStatus).toBe(200);
      const bytes = new Uint8Array(256 * 1024).map((_, i) => (i * 7 + 3) & 0xff);
      const put = await fetch(upload.url, {
        method: "PUT",
        body: bytes,
        headers: { "content-type": "application/octet-stream" },
      });
      expect(put.status).toBe(201);
      const download = await fetch(`${server.url}/v1/workspaces/${workspace.id}/files/${upload.key}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(download.status).toBe(200);
      expect(new Uint8Array(await download.arrayBuffer())).toEqual(bytes);

      // The OpenAPI page's script is inside the binary too (test/openapi-ui.test.ts renders it).
      const page = await fetch(`${server.url}/openapi`);
      expect([page.status, (await page.text()).includes('src="openapi/scalar.js"')]).toEqual([200, true]);
      const script = await fetch(`${server.url}/openapi/scalar.js`);
      expect([script.status, (await script.arrayBuffer()).byteLength > 1_000_000]).toEqual([200, true]);

      // So is the web app (web/dist as it was built), and `mnemo open` signs a browser in to it.
      const appScript = await fetch(`${server.url}/app/app.js`);
      expect([appScript.status, await appScript.text()]).toEqual([200, readFileSync(join(WEB_DIST, "app.js"), "utf8")]);
      expect((await fetch(`${server.url}/app/memories`)).headers.get("content-security-policy")).toStartWith(
        "default-src 'self'",
      );
      const opened = run(mnemo, ["open", "--user", "alice", "--url", server.url, "--json"], dir, env);
      expect([opened.exitCode, opened.stderr]).toEqual([0, ""]);
      const token = new URL(JSON.parse(opened.stdout).url).hash.replace("#signin=", "");
      const session = await fetch(`${server.url}/v1/app/session`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-mnemo-app": "1" },
        body: JSON.stringify({ token }),
      });
      expect([
        session.status,
        ((await session.json()) as { userId: string }).userId,
        session.headers.get("set-cookie")?.includes("HttpOnly"),
      ]).toEqual([200, "alice", true]);

      const out = join(dir, "alice.jsonl");
      const exported = run(mnemo, ["export", "--user", "alice", "--out", out, "--json"], dir, env);
      expect([exported.exitCode, exported.stderr]).toEqual([0, ""]);
      expect(JSON.parse(exported.stdout).records).toEqual(
        expect.objectContaining({ memory: 1, workspace: 1, file: 1 }),
      );
      const lines = readFileSync(out, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Record<string, any>);
      expect(lines[0]).toEqual(expect.objectContaining({ type: "header", userId: "alice" }));
      const types = new Set(lines.map((line) => line.type));
      expect(["memory", "workspace", "file"].filter((type) => types.has(type))).toEqual([
        "memory",
        "workspace",
        "file",
      ]);
      expect(JSON.stringify(lines)).toContain("lighthouses");

      server.proc.kill("SIGTERM");
      expect(await server.proc.exited).toBe(0);
    },
  );

  test.skipIf(!linux)(
    "reads an uploaded PDF's text in a child process of its own (the hidden command), and a bomb stays unindexed",
    async () => {
      const { dir, mnemo } = aloneInEmptyDir("pdf");
      const env = await binaryEnv(join(dir, "data"), { EMBEDDINGS_PROVIDER: "none" });
      const server = await serve(mnemo, dir, env, ["--allow-mock-tokens"]);
      const headers = { authorization: "Bearer mock-token-pdf", "content-type": "application/json" };
      const call = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(`${server.url}${path}`, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return (await response.json()) as any;
      };
      const upload = async (ws: string, name: string, bytes: Uint8Array) => {
        const issued = await call("POST", `/v1/workspaces/${ws}/files/upload-url`, {
          filename: name,
          contentType: "application/pdf",
        });
        expect(
          (await fetch(issued.url, { method: "PUT", body: bytes, headers: { "content-type": "application/pdf" } }))
            .status,
        ).toBe(201);
        return issued.key as string;
      };
      const workspace = await call("POST", "/v1/workspaces", { name: "Binary PDFs" });
      const listFiles = async () => (await call("GET", `/v1/workspaces/${workspace.id}/files`)).files;
      const census = await upload(workspace.id, "census.pdf", textPdf("Quarterly albatross census"));
      const bomb = await upload(workspace.id, "bomb.pdf", pdfBomb(10 * 1024 * 1024));
      expect(await waitForText(listFiles, census)).toEqual({ status: "indexed" });
      expect(await waitForText(listFiles, bomb)).toEqual(
        expect.objectContaining({ status: "not_indexed", reason: "text_too_large" }),
      );
      const found = await call("POST", "/v1/documents/query", {
        workspace_id: workspace.id,
        query: "albatross",
        include: { files: true },
      });
      expect(found.items.map((item: { sourceId: string; content: string }) => [item.sourceId, item.content])).toEqual([
        [census, "Quarterly albatross census"],
      ]);
      server.proc.kill("SIGTERM");
      expect(await server.proc.exited).toBe(0);
    },
  );

  test.skipIf(!linux)("help, keys and dev-token extract no native module (LanceDB stays in the binary)", async () => {
    const { dir, mnemo } = aloneInEmptyDir("light");
    const env = await binaryEnv(join(dir, "data"));
    for (const args of [
      ["--help"],
      ["keys", "create", "--user", "bob"],
      ["keys", "list"],
      ["dev-token", "create", "--user", "bob"],
    ]) {
      const result = run(mnemo, args, dir, env);
      expect({ args, exitCode: result.exitCode }).toEqual({ args, exitCode: 0 });
    }
    expect(readdirSync(env.TMPDIR)).toEqual([]);
    // The check can fail: a command that opens the index does extract it.
    expect(run(mnemo, ["reindex", "--json"], dir, env).exitCode).toBe(0);
    expect(readdirSync(env.TMPDIR).some((name) => name.endsWith(".node"))).toBe(true);
  });

  test.skipIf(!linux)("serves, reindexes with the local model and searches semantically", async () => {
    const { dir: cwd, mnemo } = aloneInEmptyDir("semantic");
    const dataDir = join(root, "semantic-data");
    writeTinyModel(join(dataDir, "models", "all-MiniLM-L6-v2"));
    const env = await binaryEnv(dataDir, {
      EMBEDDINGS_PROVIDER: "local",
      MNEMO_MODEL_DOWNLOAD: "0",
      MNEMO_MODEL_PINS: "off",
    });
    const headers = { authorization: "Bearer mock-token-bin", "content-type": "application/json" };

    const first = await serve(mnemo, cwd, env, ["--allow-mock-tokens"]);
    for (const content of ["my kitten likes the vet", "pasta and cheese for dinner", "the train to paris"]) {
      expect(
        (await fetch(`${first.url}/v1/memories`, { method: "POST", headers, body: JSON.stringify({ content }) }))
          .status,
      ).toBe(201);
    }
    first.proc.kill("SIGTERM");
    expect(await first.proc.exited).toBe(0);

    // Offline: every vector is computed by the local model inside the binary.
    const reindex = run(mnemo, ["reindex", "--embeddings", "--json"], cwd, env);
    expect([reindex.exitCode, reindex.stderr]).toEqual([0, ""]);
    expect(JSON.parse(reindex.stdout)).toEqual(
      expect.objectContaining({ sources: 3, pendingText: 0, pendingVector: 0, vectorSpace: "local:all-MiniLM-L6-v2" }),
    );

    const second = await serve(mnemo, cwd, env, ["--allow-mock-tokens"]);
    // The model loads on the first search; one that comes before it is ready answers from full text.
    const body = await waitFor(
      async () => {
        const response = await fetch(`${second.url}/v1/memories/search`, {
          method: "POST",
          headers,
          body: JSON.stringify({ query: "puppy", limit: 1 }),
        });
        const found = (await response.json()) as { mode: string; results: Array<{ content: string }> };
        return found.mode === "semantic" ? found : null;
      },
      { what: "the local model to answer a search" },
    );
    expect(body.results.map((r) => r.content)).toEqual(["my kitten likes the vet"]);
    second.proc.kill("SIGTERM");
    expect(await second.proc.exited).toBe(0);
  });
});
