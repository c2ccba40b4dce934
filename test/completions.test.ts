import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { TEST_DATABASE_URL } from "./helpers/database";
import { FIXED_USAGE, startFakeUpstream, unreachableUrl, type FakeUpstream } from "./helpers/fake-upstream";
import { startTestServer, type TestServer } from "./helpers/server";

const backend = TEST_DATABASE_URL ? "PostgreSQL" : "the embedded store";
const client = (server: TestServer, user = "alice") => new OpenAI({ apiKey: `mock-token-${user}`, baseURL: `${server.url}/v1`, maxRetries: 0 });
const lastBody = (fake: FakeUpstream) => fake.requests.at(-1)!.body;

async function until<T>(what: string, probe: () => Promise<T | null | false>): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const value = await probe();
    if (value) return value;
    await Bun.sleep(50);
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe(`chat completions proxy on ${backend}`, () => {
  let fake: FakeUpstream;
  let server: TestServer;
  beforeAll(async () => {
    fake = startFakeUpstream();
    server = await startTestServer({ env: { LLM_GATEWAY_URL: fake.url, LLM_GATEWAY_API_KEY: "upstream-secret", DEFAULT_MODEL: "llama3.2" } });
  });
  afterAll(async () => {
    await server.destroy();
    fake.stop();
  });

  test("non-streaming: the upstream's object comes back as sent; unknown fields pass through; memory is stripped", async () => {
    const { data, response } = await client(server)
      .chat.completions.create({
        model: "upstream-model-a",
        messages: [{ role: "user", content: "Say hello to the harbour master" }],
        seed: 7,
        n: 1,
        logprobs: false,
        response_format: { type: "text" },
        tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: {} } } }],
        tool_choice: "auto",
        // @ts-expect-error Mnemo's own field and a field OpenAI does not know
        memory: { enabled: false },
        x_vendor_extension: { keep: ["me"] },
      })
      .withResponse();
    expect(data.choices[0].message.content).toBe(fake.reply);
    expect(data.usage).toEqual(FIXED_USAGE);
    const sent = lastBody(fake);
    expect(sent).toEqual({
      model: "upstream-model-a",
      messages: [{ role: "user", content: "Say hello to the harbour master" }],
      seed: 7,
      n: 1,
      logprobs: false,
      response_format: { type: "text" },
      tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: {} } } }],
      tool_choice: "auto",
      x_vendor_extension: { keep: ["me"] },
    });
    expect(fake.requests.at(-1)!.headers.authorization).toBe("Bearer upstream-secret");
    expect(response.headers.get("x-svc-shimmer")).toBe("skipped");
    expect(response.headers.get("x-svc-memory-count")).toBe("0");
    expect(response.headers.get("x-svc-notes-count")).toBe("0");
    expect(Number(response.headers.get("x-svc-overhead-ms"))).toBeGreaterThanOrEqual(0);
    expect(response.headers.get("x-ratelimit-limit")).toBe("60");
    expect(response.headers.get("access-control-expose-headers")).toContain("X-Svc-Overhead-Ms");
  });

  test("no model: DEFAULT_MODEL is sent", async () => {
    const [status] = await server.call("POST", "/v1/chat/completions", { body: { messages: [{ role: "user", content: "hi" }], memory: { enabled: false } } });
    expect(status).toBe(200);
    expect(lastBody(fake).model).toBe("llama3.2");
  });

  test("streaming: chunks pass through, usage is asked for upstream and hidden unless the client asked", async () => {
    const { data: stream, response } = await client(server)
      .chat.completions.create({ model: "m", messages: [{ role: "user", content: "stream please" }], stream: true, memory: { enabled: false } } as any)
      .withResponse();
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    expect(response.headers.get("x-svc-shimmer")).toBe("skipped");
    expect(response.headers.get("x-ratelimit-remaining")).not.toBeNull();
    const chunks: any[] = [];
    for await (const chunk of stream as any) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("")).toBe(fake.reply);
    expect(chunks.every((c) => c.choices.length === 1 && !c.usage)).toBe(true);
    expect(lastBody(fake).stream_options).toEqual({ include_usage: true });
    expect(lastBody(fake).memory).toBeUndefined();

    const withUsage = await client(server).chat.completions.create({
      model: "m", messages: [{ role: "user", content: "stream please" }], stream: true, stream_options: { include_usage: true }, memory: { enabled: false },
    } as any);
    const all: any[] = [];
    for await (const chunk of withUsage as any) all.push(chunk);
    expect(all.at(-1)).toMatchObject({ choices: [], usage: FIXED_USAGE });
  });

  test("models: curated list merged with the upstream's, through the SDK", async () => {
    const models = [];
    for await (const m of client(server).models.list()) models.push(m);
    const ids = models.map((m) => m.id);
    expect(ids).toContain("gpt-4o-mini");
    expect(ids).toContain("claude-3-5-haiku-latest");
    expect(ids).toContain("upstream-model-a");
    expect(ids.filter((id) => id === "llama3.2")).toHaveLength(1);
    expect(models.find((m) => m.id === "upstream-model-a") as unknown).toEqual({ id: "upstream-model-a", object: "model", owned_by: "upstream-lab" });
    expect(new Set(models.map((m) => m.owned_by)).size).toBeGreaterThanOrEqual(4);
  });

  test("upstream 4xx keeps status and message; 5xx is 502 upstream_error", async () => {
    fake.failWith = { status: 400, body: { error: { message: "model 'nope' not found", type: "invalid_request_error" } } };
    try {
      const error = await client(server).chat.completions.create({ model: "nope", messages: [{ role: "user", content: "x" }] }).catch((e) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.status).toBe(400);
      expect(error.error).toEqual({ code: "invalid_request", message: "upstream: model 'nope' not found" });
      expect(error.headers.get("x-ratelimit-limit")).toBe("60");
      fake.failWith = { status: 503, body: { error: { message: "overloaded" } } };
      const [status, body] = await server.call("POST", "/v1/chat/completions", { body: { messages: [{ role: "user", content: "x" }] } });
      expect([status, body]).toEqual([502, { error: { code: "upstream_error", message: "the upstream model server answered 503: overloaded" } }]);
      const streamed = await client(server).chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }], stream: true }).catch((e) => e);
      expect(streamed.status).toBe(502);
    } finally {
      fake.failWith = null;
    }
  });

  test("validation: messages are required; memory.limit is bounded", async () => {
    const [s1, b1] = await server.call("POST", "/v1/chat/completions", { body: { model: "m" } });
    expect(s1).toBe(400);
    expect(b1.error.code).toBe("invalid_request");
    expect(b1.error.message).toContain("messages");
    const [s2, b2] = await server.call("POST", "/v1/chat/completions", { body: { messages: [{ role: "user", content: "x" }], memory: { limit: 0 } } });
    expect(s2).toBe(400);
    expect(b2.error.message).toContain("limit");
  });

  test("scopes: completions and models need chat", async () => {
    const key = await server.services.credentials.createApiKey({ userId: "alice", scopes: ["usage:read"] });
    const [status, body] = await server.call("POST", "/v1/chat/completions", { token: key.key, body: { messages: [{ role: "user", content: "x" }] } });
    expect(status).toBe(403);
    expect(body.error.code).toBe("forbidden");
    expect((await server.call("GET", "/v1/models", { token: key.key }))[0]).toBe(403);
  });

  test("the OpenAPI document lists what the routes answer, 429/502/504 included", async () => {
    const [, doc] = await server.call("GET", "/openapi/json", { token: null });
    const statuses = (path: string, method: string) => Object.keys(doc.paths[path][method].responses);
    expect(statuses("/v1/chat/completions", "post")).toEqual(["200", "400", "401", "403", "404", "413", "415", "429", "500", "502", "503", "504"]);
    expect(statuses("/v1/models", "get")).toEqual(["200", "401", "403", "500", "503"]);
    expect(statuses("/v1/usage", "get")).toEqual(["200", "401", "403", "500", "503"]);
    expect(statuses("/v1/credits", "get")).toEqual(["200", "401", "403", "500", "503"]);
  });

  test("a client that disconnects mid-stream aborts the upstream request", async () => {
    fake.hangStreams = true;
    try {
      const aborted = fake.nextAbort();
      const controller = new AbortController();
      const response = await fetch(`${server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: "Bearer mock-token-hal", "content-type": "application/json" },
        body: JSON.stringify({ messages: [{ role: "user", content: "hang" }], stream: true, memory: { enabled: false } }),
        signal: controller.signal,
      });
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      expect(first).toContain('"role":"assistant"');
      controller.abort();
      await aborted;
      expect(fake.aborted).toBeGreaterThanOrEqual(1);
      // The abandoned stream is metered by what it produced: the prompt, counted (no usage came).
      const { countTokens } = await import("gpt-tokenizer");
      const usage = await until("the abandoned stream to be metered", async () => {
        const [, body] = await server.call("GET", "/v1/usage", { token: "mock-token-hal" });
        return body.usage.requestCount === 1 ? body.usage : null;
      });
      expect(usage.totalTokens).toBe(3 + 3 + countTokens("user") + countTokens("hang"));
    } finally {
      fake.hangStreams = false;
    }
  });

  test("a client that disconnects while waiting for a non-streaming reply aborts the upstream request", async () => {
    fake.delayMs = 5_000;
    try {
      const before = fake.aborted;
      const aborted = fake.nextAbort();
      const controller = new AbortController();
      const pending = fetch(`${server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: "Bearer mock-token-alice", "content-type": "application/json" },
        body: JSON.stringify({ messages: [{ role: "user", content: "slow" }], memory: { enabled: false } }),
        signal: controller.signal,
      }).catch((e) => e);
      await until("the upstream to receive it", async () => fake.requests.at(-1)?.body.messages[0].content === "slow");
      controller.abort();
      await aborted;
      expect(fake.aborted).toBe(before + 1);
      expect(await pending).toBeInstanceOf(Error);
    } finally {
      fake.delayMs = 0;
    }
  });
});

describe(`upstream failures on ${backend}`, () => {
  test("connection refused is 502 upstream_error; no answer in time is 504 upstream_timeout", async () => {
    const down = await startTestServer({ env: { LLM_GATEWAY_URL: unreachableUrl() } });
    const slow = startFakeUpstream();
    slow.delayMs = 3_000;
    const late = await startTestServer({ env: { LLM_GATEWAY_URL: slow.url, LLM_GATEWAY_TIMEOUT_MS: "100" } });
    try {
      const body = { messages: [{ role: "user", content: "anyone there?" }], memory: { enabled: false } };
      expect(await down.call("POST", "/v1/chat/completions", { body })).toEqual([502, { error: { code: "upstream_error", message: "the upstream model server could not be reached" } }]);
      const error = await client(down).chat.completions.create({ model: "m", messages: [{ role: "user", content: "anyone there?" }], stream: true }).catch((e) => e);
      expect(error.status).toBe(502);
      expect(await late.call("POST", "/v1/chat/completions", { body })).toEqual([504, { error: { code: "upstream_timeout", message: "the upstream model server did not answer within 100 ms" } }]);
      expect(await late.call("POST", "/v1/chat/completions", { body: { ...body, stream: true } })).toEqual([
        504,
        { error: { code: "upstream_timeout", message: "the upstream model server did not answer within 100 ms" } },
      ]);
      // Models: the curated list still answers when the upstream is down.
      const [status, models] = await down.call("GET", "/v1/models");
      expect(status).toBe(200);
      expect(models.data.map((m: { id: string }) => m.id)).toContain("gpt-4o-mini");
    } finally {
      await down.destroy();
      await late.destroy();
      slow.stop();
    }
  });
});
