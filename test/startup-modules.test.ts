import { waitFor } from "./helpers/wait";
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dropDatabaseFor } from "./helpers/database";
import { killSpawnedServers, spawnServer } from "./helpers/cli";
import { connectMcpHttp } from "./helpers/mcp";
import { writeTinyModel } from "./helpers/tiny-model";

/**
 * `mnemo serve` starts without what only some requests need: the MCP SDK (and the zod and
 * ajv it brings), Scalar's API page bundle, the OpenAPI document's generator, the local
 * embedder and onnxruntime, PDF text extraction, the tokenizer of usage counts, the ID token
 * verifier (jose: only a server with an identity provider configured loads it, at start).
 * Checked by the modules the server process actually loaded (test/cli-startup-preload.ts
 * writes them at exit), never by timing; and the check is shown to see each of them but
 * jose once the request that needs it was served.
 */
const PRELOAD = join(import.meta.dir, "cli-startup-preload.ts");
const HEAVY: Record<string, RegExp> = {
  "MCP SDK": /node_modules\/@modelcontextprotocol\//,
  zod: /node_modules\/zod\//,
  ajv: /node_modules\/ajv\//,
  "Scalar bundle": /node_modules\/@scalar\//,
  "OpenAPI generator": /node_modules\/@elysiajs\/openapi\//,
  onnxruntime: /node_modules\/onnxruntime-node\//,
  "PDF extraction": /node_modules\/(unpdf|pdfjs-dist)\//,
  openai: /node_modules\/openai\//,
  tokenizer: /node_modules\/gpt-tokenizer\//,
  // Only a server with an identity provider configured verifies ID tokens (test/auth.test.ts).
  "ID token verifier (jose)": /node_modules\/jose\//,
  "MCP sessions": /\/src\/mcp\/http-session\.ts$/,
  "local embedder": /\/src\/search\/embedders\/local\/local-embedder\.ts$/,
};
const root = mkdtempSync(join(tmpdir(), "mnemo-startup-modules-"));
const dataDirs: string[] = [];
afterEach(killSpawnedServers);
afterAll(async () => {
  for (const dir of dataDirs) await dropDatabaseFor(dir);
  rmSync(root, { recursive: true, force: true });
});

/** `mnemo serve` with the local model present (so an eager embedder would load it) and the module recorder preloaded. */
async function serveRecorded(name: string) {
  const dataDir = join(root, name);
  dataDirs.push(dataDir);
  writeTinyModel(join(dataDir, "models", "all-MiniLM-L6-v2"));
  const out = join(root, `${name}-loaded.json`);
  const { proc, url } = await spawnServer(
    ["--data", dataDir, "--allow-mock-tokens"],
    {
      HOME: root,
      MNEMO_LOADED_MODULES_OUT: out,
      EMBEDDINGS_PROVIDER: "local",
      MNEMO_MODEL_DOWNLOAD: "0",
      MNEMO_MODEL_PINS: "off",
    },
    { bunArgs: ["--preload", PRELOAD] },
  );
  return {
    url,
    /** Stops the server (SIGTERM, a clean exit) and names the heavy parts it had loaded. */
    async heavyLoaded(): Promise<string[]> {
      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
      const modules = JSON.parse(readFileSync(out, "utf8")) as string[];
      return Object.entries(HEAVY)
        .filter(([, re]) => modules.some((m) => re.test(m)))
        .map(([part]) => part);
    },
  };
}

describe("serve loads heavy modules on first use", () => {
  test("starting and answering /health loads none of them", async () => {
    const server = await serveRecorded("health-only");
    const health = await fetch(`${server.url}/health`);
    expect(health.status).toBe(200);
    expect(await server.heavyLoaded()).toEqual([]);
  });

  test("the requests that need them load them: an MCP session, the API page's script and document, a semantic search", async () => {
    const server = await serveRecorded("all-used");
    const headers = { authorization: "Bearer mock-token-alice", "content-type": "application/json" };
    const { client } = await connectMcpHttp(server.url, "mock-token-alice");
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();
    const page = await fetch(`${server.url}/openapi/scalar.js`);
    expect([page.status, (await page.text()).length > 1_000_000]).toEqual([200, true]);
    const document = await fetch(`${server.url}/openapi/json`);
    expect([document.status, "/v1/memories" in ((await document.json()) as { paths: object }).paths]).toEqual([
      200,
      true,
    ]);
    expect(
      (
        await fetch(`${server.url}/v1/memories`, {
          method: "POST",
          headers,
          body: JSON.stringify({ content: "my kitten likes the vet" }),
        })
      ).status,
    ).toBe(201);
    // The write is embedded by the index writer (which loads the model); the search embeds its query.
    await waitFor(
      async () => {
        const health = (await (await fetch(`${server.url}/health`, { headers })).json()) as {
          index?: { pending: number; pendingVectors: number };
        };
        return health.index?.pending === 0 && health.index.pendingVectors === 0;
      },
      { what: "the memory to be indexed and embedded" },
    );
    const search = await fetch(`${server.url}/v1/memories/search`, {
      method: "POST",
      headers,
      body: JSON.stringify({ query: "puppy", limit: 1 }),
    });
    expect(search.status).toBe(200);
    expect(await server.heavyLoaded()).toEqual(
      expect.arrayContaining([
        "MCP SDK",
        "zod",
        "ajv",
        "Scalar bundle",
        "OpenAPI generator",
        "MCP sessions",
        "local embedder",
      ]),
    );
  });
});
