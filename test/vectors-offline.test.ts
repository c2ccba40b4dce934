import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { installModelFromDir } from "../src/search/index.ts";
import { cliDataDirs, killSpawnedServers, runCli, spawnServer } from "./helpers/cli";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";
import { writeTinyModel } from "./helpers/tiny-model";
import { waitUntil } from "./helpers/wait";

/**
 * The default model path without the model (download off, as on a machine without
 * network): `/health` says why vectors are unavailable instead of a growing pending count,
 * searches use the other signals, and once the model is installed the memories written
 * meanwhile get their vectors. On SQLite, and on PostgreSQL with MNEMO_TEST_DATABASE_URL.
 */
describe("vectors while the embedding model is unavailable", () => {
  let server: TestServer;
  let modelsDir: string;
  const health = async () => (await server.call("GET", "/health"))[1];

  beforeAll(async () => {
    modelsDir = tempDir("mnemo-models-");
    // The tiny model stands in for all-MiniLM-L6-v2: its files are not the pinned ones.
    server = await startTestServer({
      env: {
        EMBEDDINGS_PROVIDER: "local",
        MNEMO_MODEL_DOWNLOAD: "0",
        MNEMO_MODEL_PINS: "off",
        MNEMO_MODELS_DIR: modelsDir,
      },
    });
  });
  afterAll(() => server.destroy());

  test("health says unavailable with the reason, nothing counts as pending; installing the model catches up", async () => {
    expect((await server.call("POST", "/v1/memories", { body: { content: "my cat went to the vet" } }))[0]).toBe(201);
    const offline = await waitUntil(health, (body) => body.vectors !== "ok", { what: "vectors unavailable" });
    const [, during] = await server.call("POST", "/v1/memories/search", { body: { query: "cat vet" } });

    await installModelFromDir({
      modelsDir,
      model: "all-MiniLM-L6-v2",
      from: writeTinyModel(join(tempDir("mnemo-usb-"), "model")),
      pins: false,
    });
    const online = await waitUntil(health, (body) => body.vectors === "ok" && body.index.pendingVectors === 0, {
      what: "vectors made after the install",
    });
    // "kitten" is not in the memory: only the model's vector can find it.
    const [, after] = await server.call("POST", "/v1/memories/search", { body: { query: "kitten" } });
    expect({
      offline: { status: offline.status, vectors: offline.vectors, pendingVectors: offline.index.pendingVectors },
      during: { mode: during.mode, found: during.results.map((r: { content: string }) => r.content) },
      online: { status: online.status, vectors: online.vectors },
      after: { strategy: after.strategy, found: after.results.map((r: { content: string }) => r.content) },
    }).toEqual({
      offline: {
        status: "ok",
        vectors: `unavailable: local embedder: model all-MiniLM-L6-v2 is unavailable: not found in ${join(modelsDir, "all-MiniLM-L6-v2")} and download is disabled`,
        pendingVectors: 0,
      },
      during: { mode: "fulltext_fallback", found: ["my cat went to the vet"] },
      online: { status: "ok", vectors: "ok" },
      after: { strategy: "vector", found: ["my cat went to the vet"] },
    });
  });
});

describe("mnemo doctor while the embedding model is unavailable", () => {
  afterEach(killSpawnedServers);
  const { dataDir } = cliDataDirs("mnemo-vectors-doctor-");

  test("the embedding-model check fails with the reason the index writer recorded", async () => {
    const dir = dataDir("offline");
    const models = join(dir, "..", "offline-models");
    mkdirSync(models, { recursive: true });
    const env = { EMBEDDINGS_PROVIDER: "local", MNEMO_MODEL_DOWNLOAD: "0", MNEMO_MODELS_DIR: models };
    const server = await spawnServer(["--data", dir, "--allow-mock-tokens"], env);
    const call = async (method: string, path: string, body?: unknown) =>
      (
        await fetch(`${server.url}${path}`, {
          method,
          headers: { authorization: "Bearer mock-token-a", "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        })
      ).json() as Promise<{ vectors?: string }>;
    await call("POST", "/v1/memories", { content: "my cat went to the vet" });
    await waitUntil(
      () => call("GET", "/health"),
      (body) => body.vectors !== "ok",
      { what: "vectors unavailable" },
    );
    const result = await runCli(["doctor", "--json", "--data", dir], env);
    const reason = `local embedder: model all-MiniLM-L6-v2 is unavailable: not found in ${join(models, "all-MiniLM-L6-v2")} and download is disabled`;
    expect(JSON.parse(result.stdout).checks.find((c: { name: string }) => c.name === "embedding model")).toEqual({
      name: "embedding model",
      status: "fail",
      detail: `vectors unavailable: ${reason}`,
      hint: "changes wait for their vectors and get them once the model is there: `mnemo models pull`, or `mnemo models install --from DIR` without network",
    });
  });
});
