import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { captureWith, refOf, remember } from "./helpers/capture";
import { runCli } from "./helpers/cli";
import { startFakeUpstream, type FakeUpstream } from "./helpers/fake-upstream";
import { mock, startTestServer, type TestServer } from "./helpers/server";

/** `mnemo memories proposals [accept|reject]` on the data dir of a running server, whose captures made the proposals. */
let fake: FakeUpstream;
let server: TestServer;
beforeAll(async () => {
  fake = startFakeUpstream();
  server = await startTestServer({
    env: { LLM_GATEWAY_URL: fake.url, MNEMO_MEMORY_MODEL: "memory-model", MNEMO_EXTRACTION_RETRY_MS: "0" },
  });
});
afterAll(async () => {
  await server.destroy();
  fake.stop();
});

const cli = async (args: string[]) => {
  const result = await runCli([...args, "--data", server.dataDir]);
  let json: any = null;
  try {
    json = JSON.parse(result.stdout);
  } catch {}
  return { ...result, json };
};

describe("mnemo memories proposals", () => {
  test("lists the user's pending proposals; accept applies one, reject leaves the memory; another user's id is not found", async () => {
    const cat = await remember(server, "cu", "The user's cat is called Tom");
    const car = await remember(server, "cu", "The user drives a green car");
    await captureWith(server, fake, "cu", {
      message: "My cat is Tomás now, and I sold the green car.",
      facts: ["The user's cat is called Tomás", "The user sold the green car"],
      decide: (shown) => [
        { fact: 0, action: "update", ref: refOf(shown, 0, "cat"), content: "The user's cat is called Tomás" },
        { fact: 1, action: "delete", ref: refOf(shown, 1, "car") },
      ],
    });

    const listed = await cli(["memories", "proposals", "--user", "cu", "--json"]);
    expect([listed.exitCode, listed.stderr]).toEqual([0, ""]);
    expect(listed.json.data.map((p: any) => [p.memoryId, p.action, p.content])).toEqual([
      [cat, "update", "The user's cat is called Tomás"],
      [car, "delete", null],
    ]);
    const [update, del] = listed.json.data;

    const text = await cli(["memories", "proposals", "--user", "cu"]);
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toContain(`${update.id}  update ${cat}`);
    expect(text.stdout).toContain(
      "  now:      The user's cat is called Tom\n  proposed: The user's cat is called Tomás\n",
    );
    expect(text.stdout).toContain(`${del.id}  delete ${car}`);

    const empty = await cli(["memories", "proposals", "--user", "cv"]);
    expect([empty.exitCode, empty.stdout, empty.stderr]).toEqual([0, "", "no proposals\n"]);
    const foreign = await cli(["memories", "proposals", "accept", update.id, "--user", "cv"]);
    expect([foreign.exitCode, foreign.stdout, foreign.stderr]).toEqual([
      1,
      "",
      `mnemo: proposal '${update.id}' not found\n`,
    ]);

    const accepted = await cli(["memories", "proposals", "accept", update.id, "--user", "cu"]);
    expect([accepted.exitCode, accepted.stdout, accepted.stderr]).toEqual([0, `accepted ${update.id}\n`, ""]);
    const rejected = await cli(["memories", "proposals", "reject", del.id, "--user", "cu", "--json"]);
    expect([rejected.exitCode, rejected.json.status, rejected.json.memory.content]).toEqual([
      0,
      "rejected",
      "The user drives a green car",
    ]);
    const again = await cli(["memories", "proposals", "reject", del.id, "--user", "cu"]);
    expect([again.exitCode, again.stderr]).toEqual([1, `mnemo: proposal '${del.id}': was rejected already\n`]);

    const [, memories] = await server.call("GET", "/v1/memories", { token: mock("cu") });
    expect(memories.data.map((m: any) => m.content).sort()).toEqual([
      "The user drives a green car",
      "The user's cat is called Tomás",
    ]);
    const none = await cli(["memories", "proposals", "--user", "cu", "--json"]);
    expect(none.json).toEqual({ data: [], nextCursor: null, hasMore: false });
  });
});
