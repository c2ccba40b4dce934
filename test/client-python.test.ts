import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { startFakeUpstream, type FakeUpstream } from "./helpers/fake-upstream";
import { mock, startTestServer, type TestServer } from "./helpers/server";

let server: TestServer;
let fake: FakeUpstream;
/** Locally a machine without python3 skips this test; in CI it must run. */
const skipPython = !Bun.which("python3") && !process.env.CI;

beforeAll(async () => {
  fake = startFakeUpstream();
  server = await startTestServer({ env: { LLM_GATEWAY_URL: fake.url, MNEMO_MEMORY_MODEL: "memory-model" } });
});
afterAll(async () => {
  await server.destroy();
  fake.stop();
});

test.skipIf(skipPython)(
  "the Python client's unittest suite passes against a real server (python3, standard library only)",
  async () => {
    const [status, key] = await server.call("POST", "/v1/keys", { body: { name: "python client test" } });
    expect(status).toBe(201);
    // The one extraction the suite makes: the model's facts, then its decisions.
    fake.script.push(
      { facts: ["Ana keeps bees"] },
      { decisions: [{ fact: 0, action: "add", content: "Ana keeps bees" }] },
    );
    if (!Bun.which("python3"))
      throw new Error("python3 (3.11 or later) is not installed: this test runs the Python client's suite with it");
    const proc = Bun.spawn(["python3", "-m", "unittest", "discover", "-s", "tests", "-t", ".", "-v"], {
      cwd: join(import.meta.dir, "../clients/python"),
      // Only what the suite needs: never a developer's Python path or site packages.
      env: {
        PATH: process.env.PATH ?? "",
        PYTHONNOUSERSITE: "1",
        PYTHONDONTWRITEBYTECODE: "1",
        MNEMO_URL: server.url,
        MNEMO_API_KEY: key.key,
        MNEMO_DEV_TOKEN: mock("alice"),
      },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, exitCode] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    // unittest reports on stderr; on failure the whole report is the message.
    expect(
      { exitCode, stdout, ran: /Ran (\d+) tests?/.exec(stderr)?.[1], skipped: stderr.includes("skipped") },
      stderr,
    ).toEqual({ exitCode: 0, stdout: "", ran: "8", skipped: false });
  },
);
