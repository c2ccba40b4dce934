import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { buildBinary } from "../scripts/build-binary";
import { writeTinyModel } from "./helpers/tiny-model";
import { tempDir } from "./helpers/server";

const root = tempDir("mnemo-binary-");
const servers = new Set<Bun.Subprocess>();
afterEach(() => {
  // A failed assertion must not leave a server running.
  for (const proc of servers) if (proc.exitCode === null) proc.kill("SIGKILL");
  servers.clear();
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Runs the compiled binary from an empty dir with a minimal environment: nothing from the repo can be loaded. */
function binaryEnv(dataDir: string) {
  return { PATH: "/usr/bin:/bin", HOME: root, MNEMO_DATA_DIR: dataDir, EMBEDDINGS_PROVIDER: "local", MNEMO_MODEL_DOWNLOAD: "0", MNEMO_LOG_LEVEL: "warn" };
}

async function serve(binary: string, cwd: string, env: Record<string, string>) {
  const proc = Bun.spawn([binary, "serve", "--port", "0", "--allow-mock-tokens"], { cwd, env, stdout: "pipe", stderr: "pipe" });
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

describe("the compiled server binary", () => {
  test.skipIf(process.platform !== "linux")("serves, reindexes with the local model and searches semantically", async () => {
    const { outfile } = await buildBinary({ entry: "cli/mnemo.ts", outfile: join(root, "mnemo") });
    const dataDir = join(root, "data");
    writeTinyModel(join(dataDir, "models", "all-MiniLM-L6-v2"));
    const cwd = join(root, "cwd");
    mkdirSync(cwd);
    const env = binaryEnv(dataDir);
    const headers = { authorization: "Bearer mock-token-bin", "content-type": "application/json" };

    const first = await serve(outfile, cwd, env);
    for (const content of ["my kitten likes the vet", "pasta and cheese for dinner", "the train to paris"]) {
      expect((await fetch(`${first.url}/v1/memories`, { method: "POST", headers, body: JSON.stringify({ content }) })).status).toBe(201);
    }
    first.proc.kill("SIGTERM");
    expect(await first.proc.exited).toBe(0);

    // Offline: every vector is computed by the local model inside the binary.
    const reindex = Bun.spawnSync([outfile, "reindex", "--embeddings", "--json"], { cwd, env });
    expect([reindex.exitCode, reindex.stderr.toString()]).toEqual([0, ""]);
    expect(JSON.parse(reindex.stdout.toString())).toEqual(expect.objectContaining({ sources: 3, pendingText: 0, pendingVector: 0, vectorSpace: "local:all-MiniLM-L6-v2" }));

    const second = await serve(outfile, cwd, env);
    const response = await fetch(`${second.url}/v1/memories/search`, { method: "POST", headers, body: JSON.stringify({ query: "puppy", limit: 1 }) });
    const body = (await response.json()) as { mode: string; results: Array<{ content: string }> };
    expect([body.mode, body.results.map((r) => r.content)]).toEqual(["semantic", ["my kitten likes the vet"]]);
    second.proc.kill("SIGTERM");
    expect(await second.proc.exited).toBe(0);
  });
});
