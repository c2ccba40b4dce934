import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { loadConfig } from "../src/config";
import { migrate } from "../src/db/migrate";
import { openStoreFor } from "../src/db/open";
import { all, run, sql } from "../src/db/store";
import { createFormationJobRepository } from "../src/formation/jobs-repository";
import { allMigrations } from "../src/migrations";
import { runCli } from "./helpers/cli";
import { databaseEnvFor, dropDatabaseFor } from "./helpers/database";
import { startFakeUpstream, type FakeUpstream } from "./helpers/fake-upstream";
import { mock, startTestServer, tempDir, type TestServer } from "./helpers/server";
import { waitUntil } from "./helpers/wait";

/**
 * Extraction jobs as their owner sees them: failing from the first failed attempt, retried on
 * request, named by random ids; and a capture whose write fails shows as a failed job. The
 * wait between attempts is an hour here, so a failed attempt stays `retrying` until retried.
 */
let fake: FakeUpstream;
let server: TestServer;
beforeAll(async () => {
  fake = startFakeUpstream({ reply: "ok" });
  server = await startTestServer({
    env: { LLM_GATEWAY_URL: fake.url, MNEMO_MEMORY_MODEL: "memory-model", MNEMO_EXTRACTION_RETRY_MS: "3600000" },
  });
});
afterAll(async () => {
  await server.destroy();
  fake.stop();
});

const openai = (user: string, headers: Record<string, string> = {}) =>
  new OpenAI({ apiKey: mock(user), baseURL: `${server.url}/v1`, maxRetries: 0, defaultHeaders: headers });
const jobsOf = async (user: string) =>
  (await server.call("GET", "/v1/memories/extract/jobs", { token: mock(user) }))[1].data as any[];
const contents = async (user: string) =>
  ((await server.call("GET", "/v1/memories", { token: mock(user) }))[1].data as any[]).map((m) => m.content);
/** The user's jobs once every one of them is in one of `states` (the worker run meanwhile, no clock involved). */
const jobsWhen = (user: string, count: number, states: string[]) =>
  waitUntil(
    async () => {
      await server.services.capture.runDue();
      return jobsOf(user);
    },
    (list) => list.length === count && list.every((j) => states.includes(j.status)),
    { what: `${count} jobs of ${user} ${states.join(" or ")}` },
  );

/** A captured exchange whose first extraction attempt gets a reply the checks refuse. */
async function failingCapture(user: string, says: string) {
  fake.script.push("ok", "Sorry, I cannot answer in JSON.");
  await openai(user, { "X-Svc-Remember": "true" }).chat.completions.create({
    model: "m",
    messages: [{ role: "user", content: says }],
  });
  await server.services.capture.idle();
  return (await jobsWhen(user, 1, ["retrying"]))[0];
}

describe("extraction jobs", () => {
  test("a job is retrying from its first failed attempt, with why and when; doctor warns; a retry once the model is fixed forms the memory", async () => {
    const job = await failingCapture("jb-a", "I play the oboe.");
    expect(job).toEqual({
      id: job.id,
      status: "retrying",
      attempts: 1,
      lastError: expect.stringContaining("not usable"),
      nextAttemptAt: expect.any(String),
      captured: true,
      retryable: true,
      threadId: expect.stringMatching(/^thr_/),
      workspaceId: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(Date.parse(job.nextAttemptAt)).toBeGreaterThan(Date.parse(job.updatedAt));

    const doctor = await runCli(["doctor", "--json", "--data", server.dataDir], { LLM_GATEWAY_URL: fake.url });
    const check = JSON.parse(doctor.stdout).checks.find((c: any) => c.name === "memory extraction");
    expect(check).toEqual({
      name: "memory extraction",
      status: "warn",
      detail: expect.stringContaining("1 retrying"),
      hint: expect.stringContaining("retry"),
    });
    expect(check.detail).toContain("latest error: the memory model's reply was not usable");

    fake.script.push({ facts: ["The user plays the oboe"] }, { decisions: [{ fact: 0, action: "add" }] });
    const [status, queued] = await server.call("POST", `/v1/memories/extract/jobs/${job.id}/retry`, {
      token: mock("jb-a"),
    });
    expect([status, queued.id, queued.attempts, queued.lastError]).toEqual([200, job.id, 0, null]);
    const [done] = await jobsWhen("jb-a", 1, ["done"]);
    expect([done.attempts, done.lastError, done.nextAttemptAt, done.retryable]).toEqual([1, null, null, false]);
    expect(await contents("jb-a")).toEqual(["The user plays the oboe"]);
  });

  test("retry: another user's job and an unknown id are 404, a job not failing is 409, a malformed id is 400", async () => {
    const job = await failingCapture("jb-b", "I grow tomatoes.");
    const retry = (user: string, id: string) =>
      server.call("POST", `/v1/memories/extract/jobs/${encodeURIComponent(id)}/retry`, { token: mock(user) });
    expect(await retry("jb-b-other", job.id)).toEqual([
      404,
      { error: { code: "not_found", message: `id: no extraction job ${job.id}` } },
    ]);
    expect(await retry("jb-b", "job_nope")).toEqual([
      404,
      { error: { code: "not_found", message: "id: no extraction job job_nope" } },
    ]);
    const [bad, badBody] = await retry("jb-b", "x".repeat(129));
    expect([bad, badBody.error.code, badBody.error.message.startsWith("id")]).toEqual([400, "invalid_request", true]);
    // The other user's attempt changed nothing.
    expect((await jobsOf("jb-b"))[0]).toEqual(job);

    fake.script.push({ facts: [] });
    expect((await retry("jb-b", job.id))[0]).toBe(200);
    await jobsWhen("jb-b", 1, ["done"]);
    expect(await retry("jb-b", job.id)).toEqual([
      409,
      {
        error: {
          code: "conflict",
          message: `id: job ${job.id} is done; only a failed job, or one waiting to retry, can be retried`,
        },
      },
    ]);
  });

  test("job ids are random, never the server's count of jobs", async () => {
    fake.script.push("ok", { facts: [] }, "ok", { facts: [] });
    const client = openai("jb-c", { "X-Svc-Remember": "true" });
    await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "one" }] });
    await server.services.capture.idle();
    await jobsWhen("jb-c", 1, ["done"]);
    await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "two" }] });
    await server.services.capture.idle();
    const ids = (await jobsWhen("jb-c", 2, ["done"])).map((j) => j.id);
    const seqs = (await createFormationJobRepository().listByOwner(server.services.store.db, "jb-c")).map((j) => j.seq);
    expect(ids.every((id) => /^job_[0-9A-HJKMNP-TV-Z]{26}$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(2);
    expect(ids.some((id, i) => id === `job_${seqs[i]}`)).toBe(false);
  });

  test("a capture whose write fails is a failed job of its owner, with the reason and none of the conversation", async () => {
    const [, ws] = await server.call("POST", "/v1/workspaces", { token: mock("jb-d"), body: { name: "elsewhere" } });
    const [, thread] = await server.call("POST", `/v1/workspaces/${ws.id}/chats`, {
      token: mock("jb-d"),
      body: { title: "t" },
    });
    // The thread id is the user's own, in another workspace than the one capture writes to: the write fails.
    fake.script.push("ok");
    const { response } = await openai("jb-d", { "X-Svc-Remember": "true", "X-Svc-Thread": thread.id })
      .chat.completions.create({ model: "m", messages: [{ role: "user", content: "my secret recipe is cardamom" }] })
      .withResponse();
    expect(response.headers.get("x-svc-remember")).toBe("queued");
    await server.services.capture.idle();
    const [job] = await jobsOf("jb-d");
    expect(job).toEqual({
      id: expect.stringMatching(/^job_/),
      status: "failed",
      attempts: 0,
      lastError: `the conversation could not be stored (the thread id ${thread.id} is taken by another thread); nothing of it was kept`,
      nextAttemptAt: null,
      captured: false,
      retryable: false,
      threadId: thread.id,
      workspaceId: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(
      JSON.stringify(await createFormationJobRepository().listByOwner(server.services.store.db, "jb-d")),
    ).not.toContain("cardamom");
    const [status, body] = await server.call("POST", `/v1/memories/extract/jobs/${job.id}/retry`, {
      token: mock("jb-d"),
    });
    expect([status, body.error.code, body.error.message]).toEqual([
      409,
      "conflict",
      `id: job ${job.id} cannot be retried: its conversation could not be stored, so there is nothing to extract from`,
    ]);
    expect(await jobsOf("jb-d-other")).toEqual([]);
  });

  test("a capture into a workspace deleted before it was written stores nothing and is a failed job", async () => {
    const [, ws] = await server.call("POST", "/v1/workspaces", { token: mock("jb-g"), body: { name: "gone soon" } });
    expect((await server.call("DELETE", `/v1/workspaces/${ws.id}`, { token: mock("jb-g") }))[0]).toBe(200);
    server.services.capture.record({
      userId: "jb-g",
      workspaceId: ws.id,
      threadId: "thr_late",
      messages: ["my locker code is 4471"],
      reply: "noted",
    });
    await server.services.capture.idle();
    const [job] = await jobsOf("jb-g");
    expect([job.status, job.captured, job.lastError]).toEqual([
      "failed",
      false,
      "the conversation could not be stored (its workspace no longer exists); nothing of it was kept",
    ]);
    const [status] = await server.call("GET", `/v1/workspaces/${ws.id}/chats/thr_late/messages`, {
      token: mock("jb-g"),
    });
    expect(status).toBe(404);
  });

  test("mnemo memories jobs lists a user's failing jobs; jobs retry ID queues one again", async () => {
    const job = await failingCapture("jb-e", "I sail on weekends.");
    const listed = await runCli(["memories", "jobs", "--user", "jb-e", "--data", server.dataDir, "--json"]);
    expect({ exitCode: listed.exitCode, stderr: listed.stderr, data: JSON.parse(listed.stdout).data }).toEqual({
      exitCode: 0,
      stderr: "",
      data: [job],
    });
    const text = await runCli(["memories", "jobs", "--user", "jb-e", "--data", server.dataDir]);
    expect(text.exitCode).toBe(0);
    expect(text.stdout.split("\n")[1]).toStartWith(`${job.id}  retrying  1 `);
    expect(text.stdout).toContain("not usable");
    expect(text.stderr).toBe("1 can be retried: mnemo memories jobs retry ID --user jb-e\n");

    expect(
      await runCli(["memories", "jobs", "retry", job.id, "--user", "jb-e-other", "--data", server.dataDir]),
    ).toEqual({ exitCode: 1, stdout: "", stderr: `mnemo: ID: no extraction job ${job.id}\n` });
    fake.script.push({ facts: ["The user sails on weekends"] }, { decisions: [{ fact: 0, action: "add" }] });
    const retried = await runCli(["memories", "jobs", "retry", job.id, "--user", "jb-e", "--data", server.dataDir]);
    expect(retried).toEqual({ exitCode: 0, stdout: `queued ${job.id}\n`, stderr: "" });
    await jobsWhen("jb-e", 1, ["done"]);
    expect(await contents("jb-e")).toEqual(["The user sails on weekends"]);
    const again = await runCli(["memories", "jobs", "retry", job.id, "--user", "jb-e", "--data", server.dataDir]);
    expect([again.exitCode, again.stderr]).toEqual([
      1,
      `mnemo: ID: job ${job.id} is done; only a failed job, or one waiting to retry, can be retried\n`,
    ]);
  });

  test("mnemo remember says when the memory was already remembered", async () => {
    const first = await runCli(["remember", "Alice prefers green tea", "--user", "jb-f", "--data", server.dataDir]);
    expect([first.exitCode, first.stderr.startsWith("remembered for jb-f (")]).toEqual([0, true]);
    const second = await runCli(["remember", "alice prefers  green tea", "--user", "jb-f", "--data", server.dataDir]);
    expect({ exitCode: second.exitCode, stdout: second.stdout }).toEqual({ exitCode: 0, stdout: first.stdout });
    expect(second.stderr).toStartWith("already remembered for jb-f: nothing stored (");
    expect(await contents("jb-f")).toEqual(["Alice prefers green tea"]);
  });
});

describe("POST /v1/memories/extract", () => {
  test("a fact the model gave no decision for says missing_decision; an explicit none says model", async () => {
    fake.script.push(
      { facts: ["The user likes rain", "The user owns a kayak"] },
      { decisions: [{ fact: 0, action: "none" }] },
    );
    const [status, body] = await server.call("POST", "/v1/memories/extract", {
      token: mock("jb-g"),
      body: { messages: [{ role: "user", content: "I like rain and I own a kayak." }] },
    });
    expect([status, body.decisions]).toEqual([
      200,
      [
        { fact: "The user likes rain", action: "none", memoryId: null, content: null, previous: null, reason: "model" },
        {
          fact: "The user owns a kayak",
          action: "none",
          memoryId: null,
          content: null,
          previous: null,
          reason: "missing_decision",
        },
      ],
    ]);
  });
});

describe("the job id migration", () => {
  test("jobs stored before it get random ids", async () => {
    const dataDir = tempDir("mnemo-job-ids-");
    const config = loadConfig(
      { dataDir },
      { EMBEDDINGS_PROVIDER: "none", ...(await databaseEnvFor(dataDir, { migrated: false })) },
    );
    const store = openStoreFor(config.storage, dataDir);
    try {
      await migrate(
        store,
        allMigrations.filter((m) => m.id < "0535"),
      );
      for (const owner of ["old-a", "old-b"]) {
        await run(
          store.db,
          sql`INSERT INTO formation_jobs (owner_id, thread_workspace_id, thread_id, message_ids, created_at, updated_at) VALUES (${owner}, 'ws', 'thr', '[]', 'x', 'x')`,
        );
      }
      await migrate(store, allMigrations);
      const rows = await all<{ seq: number; id: string }>(
        store.db,
        sql`SELECT seq, id FROM formation_jobs ORDER BY seq`,
      );
      expect(rows.every((r) => /^job_\S{8,}$/.test(r.id) && r.id !== `job_${r.seq}`)).toBe(true);
      expect(new Set(rows.map((r) => r.id)).size).toBe(2);
    } finally {
      await store.close();
      await dropDatabaseFor(dataDir);
    }
  });
});
