import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import {
  createCaptureSettingsRepository,
  createFormationJobRepository,
  type FormationJob,
} from "../src/formation/jobs-repository";
import { createChatRepository } from "../src/chats/repository";
import { conversationsWorkspaceId, createCapture, MAX_ATTEMPTS } from "../src/formation/capture";
import { createWorkspaceRepository } from "../src/workspaces/repository";
import { startFakeUpstream, type FakeUpstream } from "./helpers/fake-upstream";
import { openStoreFor } from "../src/db/open";
import { mock, startTestServer, tempDir, type TestServer } from "./helpers/server";

let fake: FakeUpstream;
let server: TestServer;
const jobs = createFormationJobRepository();
beforeAll(async () => {
  fake = startFakeUpstream({ reply: "Noted, Rex is a lovely name." });
  server = await startTestServer({
    env: { LLM_GATEWAY_URL: fake.url, MNEMO_MEMORY_MODEL: "memory-model", MNEMO_EXTRACTION_RETRY_MS: "0" },
  });
});
afterAll(async () => {
  await server.destroy();
  fake.stop();
});

const openai = (user: string, headers: Record<string, string> = {}) =>
  new OpenAI({ apiKey: mock(user), baseURL: `${server.url}/v1`, maxRetries: 0, defaultHeaders: headers });
const userJobs = (user: string) => jobs.listByOwner(server.services.store.db, user);

/** Runs the worker until the user has `count` jobs and none is pending or running (no clock involved). */
async function settled(user: string, count: number): Promise<FormationJob[]> {
  for (;;) {
    await server.services.capture.runDue();
    const list = await userJobs(user);
    if (list.length >= count && list.every((j) => j.status === "done" || j.status === "failed")) return list;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
const contents = async (user: string) =>
  ((await server.call("GET", "/v1/memories", { token: mock(user) }))[1].data as any[]).map((m) => m.content);
const messagesOf = async (user: string, ws: string, thread: string) =>
  ((await server.call("GET", `/v1/workspaces/${ws}/chats/${thread}/messages`, { token: mock(user) }))[1] as any[]).map(
    (m) => [m.role, m.content],
  );

describe("capture (X-Svc-Remember)", () => {
  test("off by default: nothing is recorded, no extraction runs", async () => {
    const before = fake.requests.length;
    const { response } = await openai("cap-off")
      .chat.completions.create({ model: "m", messages: [{ role: "user", content: "My dog is Rex." }] })
      .withResponse();
    expect(response.headers.get("x-svc-thread")).toBeNull();
    expect(response.headers.get("x-svc-remember")).toBeNull();
    await server.services.capture.idle();
    await server.services.capture.runDue();
    expect(await userJobs("cap-off")).toEqual([]);
    expect(fake.requests.length).toBe(before + 1);
    expect(
      (
        await server.call("GET", `/v1/workspaces/${conversationsWorkspaceId("cap-off")}`, { token: mock("cap-off") })
      )[0],
    ).toBe(404);
  });

  test("a completion asked to remember: the exchange goes to a thread after the reply, and its facts become memories with their source", async () => {
    fake.script.push(
      "Noted, Rex is a lovely name.",
      { facts: ["The user has a dog named Rex"] },
      { decisions: [{ fact: 0, action: "add" }] },
    );
    const { data, response } = await openai("cap-a", { "X-Svc-Remember": "true" })
      .chat.completions.create({
        model: "m",
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Our new dog is called Rex." },
        ],
      })
      .withResponse();
    expect(data.choices[0].message.content).toBe("Noted, Rex is a lovely name.");
    const thread = response.headers.get("x-svc-thread")!;
    expect(thread).toMatch(/^thr_/);
    expect(response.headers.get("x-svc-remember")).toBe("queued");
    const [job] = await settled("cap-a", 1);
    expect(job.status).toBe("done");
    expect(await contents("cap-a")).toEqual(["The user has a dog named Rex"]);
    const ws = conversationsWorkspaceId("cap-a");
    expect(await messagesOf("cap-a", ws, thread)).toEqual([
      ["user", "Our new dog is called Rex."],
      ["assistant", "Noted, Rex is a lovely name."],
    ]);
    const [, list] = await server.call("GET", "/v1/memories", { token: mock("cap-a") });
    const [, history] = await server.call("GET", `/v1/memories/${list.data[0].id}/history`, { token: mock("cap-a") });
    expect(history.data[0]).toMatchObject({
      source: "extraction",
      threadId: thread,
      messageIds: job.messageIds,
      model: "memory-model",
    });
    // The extraction calls went to the memory model, after the completion itself, and are metered to the user.
    expect(fake.requests.slice(-2).map((r) => r.body.model)).toEqual(["memory-model", "memory-model"]);
    const [, usage] = await server.call("GET", "/v1/usage", { token: mock("cap-a") });
    expect(usage.usage.requestCount).toBe(3);
  });

  test("streaming, in a named thread of a workspace: the thread grows turn by turn, memories go to that workspace", async () => {
    const [, ws] = await server.call("POST", "/v1/workspaces", { token: mock("cap-s"), body: { name: "home" } });
    const client = openai("cap-s", { "X-Svc-Remember": "true", "X-Svc-Thread": "thr_cap_s", "X-Svc-Workspace": ws.id });
    fake.script.push({ facts: ["The user lives in Porto"] }, { decisions: [{ fact: 0, action: "add" }] });
    const stream = await client.chat.completions.create({
      model: "m",
      stream: true,
      messages: [{ role: "user", content: "I live in Porto." }],
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
    expect(text).toBe("Noted, Rex is a lovely name.");
    await settled("cap-s", 1);
    fake.script.push({ facts: [] });
    const again = await client.chat.completions.create({
      model: "m",
      stream: true,
      messages: [
        { role: "user", content: "I live in Porto." },
        { role: "assistant", content: text },
        { role: "user", content: "And I cycle." },
      ],
    });
    for await (const _ of again);
    const done = await settled("cap-s", 2);
    expect(done.map((j) => j.status)).toEqual(["done", "done"]);
    expect(await messagesOf("cap-s", ws.id, "thr_cap_s")).toEqual([
      ["user", "I live in Porto."],
      ["assistant", "Noted, Rex is a lovely name."],
      ["user", "And I cycle."],
      ["assistant", "Noted, Rex is a lovely name."],
    ]);
    const [, list] = await server.call("GET", "/v1/memories", { token: mock("cap-s") });
    expect(list.data.map((m: any) => [m.content, m.workspaceId])).toEqual([["The user lives in Porto", ws.id]]);
  });

  test("a job whose model replies are unusable is retried, then marked failed; nothing is changed", async () => {
    fake.script.push("ok", ...Array.from({ length: MAX_ATTEMPTS }, () => "I refuse to answer in JSON."));
    await openai("cap-f", { "X-Svc-Remember": "true" }).chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "I like jazz." }],
    });
    const [job] = await settled("cap-f", 1);
    expect([job.status, job.attempts]).toEqual(["failed", MAX_ATTEMPTS]);
    expect(job.lastError).toContain("not usable");
    expect(fake.script).toEqual([]);
    expect(await contents("cap-f")).toEqual([]);
    // Visible to its owner, with our message; to nobody else; counted in /health's details.
    const [, listed] = await server.call("GET", "/v1/memories/extract/jobs", { token: mock("cap-f") });
    expect(listed.data).toEqual([
      expect.objectContaining({
        id: job.id,
        status: "failed",
        attempts: MAX_ATTEMPTS,
        lastError: job.lastError,
        retryable: true,
      }),
    ]);
    expect((await server.call("GET", "/v1/memories/extract/jobs", { token: mock("cap-f-other") }))[1].data).toEqual([]);
    const [, health] = await server.call("GET", "/health", { token: mock("cap-f") });
    expect(health.extractionJobs.failed).toBeGreaterThanOrEqual(1);
    expect((await server.call("GET", "/health", { token: null }))[1].extractionJobs).toBeUndefined();
  });

  test("a job that failed for good is retried once the gateway is fixed, and its memory forms", async () => {
    // The completion is answered; from then on the gateway is down.
    fake.script.push(() => {
      fake.failWith = { status: 503, body: { error: { message: "gateway down" } } };
      return "ok";
    });
    try {
      await openai("cap-fr", { "X-Svc-Remember": "true" }).chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "I speak Welsh." }],
      });
      const [job] = await settled("cap-fr", 1);
      expect([job.status, job.attempts]).toEqual(["failed", MAX_ATTEMPTS]);
    } finally {
      fake.failWith = null;
    }
    const [, before] = await server.call("GET", "/v1/memories/extract/jobs", { token: mock("cap-fr") });
    const id = before.data[0].id;
    fake.script.push({ facts: ["The user speaks Welsh"] }, { decisions: [{ fact: 0, action: "add" }] });
    const [status, queued] = await server.call("POST", `/v1/memories/extract/jobs/${id}/retry`, {
      token: mock("cap-fr"),
    });
    expect([status, queued]).toEqual([
      200,
      expect.objectContaining({ id, status: "pending", attempts: 0, lastError: null, retryable: false }),
    ]);
    const [done] = await settled("cap-fr", 1);
    expect([done.status, done.attempts, done.lastError]).toEqual(["done", 1, null]);
    expect(await contents("cap-fr")).toEqual(["The user speaks Welsh"]);
    // Done: nothing to retry.
    const [again, refused] = await server.call("POST", `/v1/memories/extract/jobs/${id}/retry`, {
      token: mock("cap-fr"),
    });
    expect([again, refused.error.code]).toEqual([409, "conflict"]);
  });

  test("a job whose replica died mid-run (its lease lapsed) is taken over and applied", async () => {
    const [, ws] = await server.call("POST", "/v1/workspaces", { token: mock("cap-r"), body: { name: "r" } });
    const [, thread] = await server.call("POST", `/v1/workspaces/${ws.id}/chats`, {
      token: mock("cap-r"),
      body: { title: "t" },
    });
    const [, message] = await server.call("POST", `/v1/workspaces/${ws.id}/chats/${thread.id}/messages`, {
      token: mock("cap-r"),
      body: { role: "user", content: "I play the cello." },
    });
    const store = server.services.store;
    // A job claimed by a replica that then died: running, its lease already over.
    const claimed = await store.transaction(async (tx) => {
      await jobs.enqueue(
        tx,
        {
          ownerId: "cap-r",
          workspaceId: null,
          threadWorkspaceId: ws.id,
          threadId: thread.id,
          messageIds: [message.id],
        },
        0,
      );
      return jobs.claim(tx, 0, 1);
    });
    expect(claimed?.status).toBe("running");
    fake.script.push({ facts: ["The user plays the cello"] }, { decisions: [{ fact: 0, action: "add" }] });
    const [job] = await settled("cap-r", 1);
    expect([job.status, job.attempts]).toEqual(["done", 2]);
    expect(await contents("cap-r")).toEqual(["The user plays the cello"]);
    expect(await server.services.capture.runDue()).toBe(0);
  });

  test("a job run twice at once (a replica past its lease, another taking over) applies once", async () => {
    const [, ws] = await server.call("POST", "/v1/workspaces", { token: mock("cap-2"), body: { name: "two" } });
    const [, thread] = await server.call("POST", `/v1/workspaces/${ws.id}/chats`, {
      token: mock("cap-2"),
      body: { title: "t" },
    });
    const [, message] = await server.call("POST", `/v1/workspaces/${ws.id}/chats/${thread.id}/messages`, {
      token: mock("cap-2"),
      body: { role: "user", content: "I moved to Oslo." },
    });
    const [, memory] = await server.call("POST", "/v1/memories", {
      token: mock("cap-2"),
      body: { content: "The user lives in Bergen" },
    });
    await server.services.indexer.drain();
    await server.services.store.transaction((tx) =>
      jobs.enqueue(
        tx,
        {
          ownerId: "cap-2",
          workspaceId: null,
          threadWorkspaceId: ws.id,
          threadId: thread.id,
          messageIds: [message.id],
        },
        Date.now(),
      ),
    );
    // Both runs get the same answers, whatever order their calls arrive in.
    const model = (body: any) => {
      if (body.messages[0].content.includes("extract durable facts")) return { facts: ["The user lives in Oslo"] };
      const shown = JSON.parse(body.messages[1].content).facts;
      return {
        decisions: [
          {
            fact: 0,
            action: "update",
            ref: shown[0].memories.find((m: any) => m.content.includes("Bergen")).ref,
            content: "The user lives in Oslo",
          },
        ],
      };
    };
    fake.script.push(model, model, model, model);
    // A second worker whose claims lapse at once: the server's own worker takes the job over while it runs.
    const s = server.services;
    const slow = createCapture({
      store: s.store,
      chats: createChatRepository(),
      workspaces: createWorkspaceRepository(),
      jobs,
      settings: createCaptureSettingsRepository(),
      outbox: s.outbox,
      formation: s.formation,
      scheduler: s.scheduler,
      log: s.log,
      enabled: true,
      isWorker: () => true,
      leaseMs: 0,
    });
    fake.delayMs = 100;
    try {
      const takeOver = async () => {
        // Until the server's worker has claimed the running job too (or the first run ended).
        for (;;) {
          const [job] = await userJobs("cap-2");
          if (job.status === "done") return 0;
          if (job.status === "running" && (await s.capture.runDue()) > 0) return 1;
          await new Promise((resolve) => setImmediate(resolve));
        }
      };
      const [a, b] = await Promise.all([slow.runDue(), takeOver()]);
      expect([a, b]).toEqual([1, 1]);
    } finally {
      fake.delayMs = 0;
      fake.script.length = 0;
    }
    expect(fake.script).toEqual([]);
    const [job] = await userJobs("cap-2");
    expect([job.status, job.attempts]).toEqual(["done", 2]);
    const [, history] = await server.call("GET", `/v1/memories/${memory.id}/history`, { token: mock("cap-2") });
    // The memory is the person's: the update is proposed to them, once, and not applied.
    expect(history.data.map((v: any) => [v.event, v.content])).toEqual([["created", "The user lives in Bergen"]]);
    const [, proposals] = await server.call("GET", "/v1/memories/proposals", { token: mock("cap-2") });
    expect(proposals.data.map((p: any) => [p.memoryId, p.action, p.content])).toEqual([
      [memory.id, "update", "The user lives in Oslo"],
    ]);
  });

  test("the same thread id chosen by two users: each has a thread of their own, and neither sees the other's", async () => {
    fake.script.push("ok", { facts: [] });
    const { response } = await openai("cap-x", { "X-Svc-Remember": "true", "X-Svc-Thread": "thr_private_x" })
      .chat.completions.create({ model: "m", messages: [{ role: "user", content: "secret plans" }] })
      .withResponse();
    expect(response.headers.get("x-svc-thread")).toBe("thr_private_x");
    await settled("cap-x", 1);
    fake.script.push("ok", { facts: [] });
    const { response: theirs } = await openai("cap-y", { "X-Svc-Remember": "true", "X-Svc-Thread": "thr_private_x" })
      .chat.completions.create({ model: "m", messages: [{ role: "user", content: "I am someone else" }] })
      .withResponse();
    expect(theirs.status).toBe(200);
    expect((await settled("cap-y", 1)).map((j) => j.status)).toEqual(["done"]);
    expect({
      x: await messagesOf("cap-x", conversationsWorkspaceId("cap-x"), "thr_private_x"),
      y: await messagesOf("cap-y", conversationsWorkspaceId("cap-y"), "thr_private_x"),
    }).toEqual({
      x: [
        ["user", "secret plans"],
        ["assistant", "ok"],
      ],
      y: [
        ["user", "I am someone else"],
        ["assistant", "ok"],
      ],
    });
  });

  test("a user's default: on, completions without the header are captured; X-Svc-Remember: false still opts out; other users unaffected", async () => {
    expect(await server.call("GET", "/v1/me/capture", { token: mock("cap-d") })).toEqual([
      200,
      { remember: false, available: true },
    ]);
    expect(await server.call("PUT", "/v1/me/capture", { token: mock("cap-d"), body: { remember: true } })).toEqual([
      200,
      { remember: true, available: true },
    ]);
    expect((await server.call("PUT", "/v1/me/capture", { token: mock("cap-d"), body: { remember: "yes" } }))[0]).toBe(
      400,
    );
    fake.script.push("ok", { facts: [] });
    const { response } = await openai("cap-d")
      .chat.completions.create({ model: "m", messages: [{ role: "user", content: "hello" }] })
      .withResponse();
    expect(response.headers.get("x-svc-remember")).toBe("queued");
    expect((await settled("cap-d", 1)).map((j) => j.status)).toEqual(["done"]);
    const { response: optedOut } = await openai("cap-d", { "X-Svc-Remember": "false" })
      .chat.completions.create({ model: "m", messages: [{ role: "user", content: "not this one" }] })
      .withResponse();
    expect(optedOut.headers.get("x-svc-remember")).toBeNull();
    const { response: other } = await openai("cap-d-other")
      .chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] })
      .withResponse();
    expect(other.headers.get("x-svc-remember")).toBeNull();
    await server.services.capture.idle();
    expect(await userJobs("cap-d")).toHaveLength(1);
    expect(await userJobs("cap-d-other")).toEqual([]);
  });

  test("a job written before a stop runs after the restart", async () => {
    const dataDir = tempDir("mnemo-capture-restart-");
    const env = { LLM_GATEWAY_URL: fake.url, MNEMO_MEMORY_MODEL: "memory-model" };
    const first = await startTestServer({ dataDir, env });
    const [, ws] = await first.call("POST", "/v1/workspaces", { token: mock("cap-rs"), body: { name: "r" } });
    const [, thread] = await first.call("POST", `/v1/workspaces/${ws.id}/chats`, {
      token: mock("cap-rs"),
      body: { title: "t" },
    });
    const [, message] = await first.call("POST", `/v1/workspaces/${ws.id}/chats/${thread.id}/messages`, {
      token: mock("cap-rs"),
      body: { role: "user", content: "I keep bees." },
    });
    const config = first.services.config;
    await first.stop();
    // Committed as a capture commits it, with no server running: as if the process died right after.
    const store = openStoreFor(config.storage, dataDir);
    await store.transaction((tx) =>
      jobs.enqueue(
        tx,
        {
          ownerId: "cap-rs",
          workspaceId: null,
          threadWorkspaceId: ws.id,
          threadId: thread.id,
          messageIds: [message.id],
        },
        Date.now(),
      ),
    );
    await store.close();
    fake.script.push({ facts: ["The user keeps bees"] }, { decisions: [{ fact: 0, action: "add" }] });
    const again = await startTestServer({ dataDir, env });
    try {
      for (;;) {
        await again.services.capture.runDue();
        const [job] = await jobs.listByOwner(again.services.store.db, "cap-rs");
        if (job.status === "done") break;
        await new Promise((resolve) => setImmediate(resolve));
      }
      const [, list] = await again.call("GET", "/v1/memories", { token: mock("cap-rs") });
      expect(list.data.map((m: any) => m.content)).toEqual(["The user keeps bees"]);
    } finally {
      await again.destroy();
    }
  });

  test("X-Svc-Remember must be true or false", async () => {
    const [status, body] = await server.call("POST", "/v1/chat/completions", {
      token: mock("cap-v"),
      headers: { "x-svc-remember": "yes please" },
      body: { model: "m", messages: [{ role: "user", content: "hi" }] },
    });
    expect([status, body.error.message]).toEqual([400, "X-Svc-Remember: must be true or false"]);
  });
});
