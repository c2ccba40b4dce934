import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { loadConfig } from "../src/config";
import { createLogger } from "../src/lib/log";
import { startServer } from "../src/server";
import { databaseEnvFor, TEST_DATABASE_URL } from "./helpers/database";
import { FIXED_USAGE, startFakeUpstream, unreachableUrl, type FakeUpstream } from "./helpers/fake-upstream";
import { startTestServer, tempDir, withClient, type TestServer } from "./helpers/server";
import { waitFor } from "./helpers/wait";

const backend = TEST_DATABASE_URL ? "PostgreSQL" : "the embedded store";
const client = (server: TestServer, user = "alice") =>
  new OpenAI({ apiKey: `mock-token-${user}`, baseURL: `${server.url}/v1`, maxRetries: 0 });
const lastBody = (fake: FakeUpstream) => fake.requests.at(-1)!.body;

const until = <T>(what: string, probe: () => Promise<T>) => waitFor(probe, { what });

describe(`chat completions proxy on ${backend}`, () => {
  let fake: FakeUpstream;
  let server: TestServer;
  beforeAll(async () => {
    fake = startFakeUpstream();
    server = await startTestServer({
      env: { LLM_GATEWAY_URL: fake.url, LLM_GATEWAY_API_KEY: "upstream-secret", DEFAULT_MODEL: "llama3.2" },
    });
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
      // No bound sent: the gateway gets the one the quota held.
      max_tokens: 1024,
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
    const [status] = await server.call("POST", "/v1/chat/completions", {
      body: { messages: [{ role: "user", content: "hi" }], memory: { enabled: false } },
    });
    expect(status).toBe(200);
    expect(lastBody(fake).model).toBe("llama3.2");
  });

  test("streaming: chunks pass through, usage is asked for upstream and hidden unless the client asked", async () => {
    const { data: stream, response } = await client(server)
      .chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "stream please" }],
        stream: true,
        memory: { enabled: false },
      } as any)
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
      model: "m",
      messages: [{ role: "user", content: "stream please" }],
      stream: true,
      stream_options: { include_usage: true },
      memory: { enabled: false },
    } as any);
    const all: any[] = [];
    for await (const chunk of withUsage as any) all.push(chunk);
    expect(all.at(-1)).toMatchObject({ choices: [], usage: FIXED_USAGE });
  });

  test("the gateway gets the completion bound the quota held, never the caller's larger or unbounded one", async () => {
    const ask = { messages: [{ role: "user", content: "bounded" }], memory: { enabled: false } };
    const cases: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      // A gateway honouring max_tokens used 50,010 tokens while 100 were held.
      [
        { max_completion_tokens: 100, max_tokens: 50_000 },
        { max_completion_tokens: 100, max_tokens: 100 },
      ],
      // -1 ("no limit") and nothing at all hold the reserve, and send it.
      [{ max_tokens: -1 }, { max_tokens: 1024 }],
      [{}, { max_tokens: 1024 }],
      [{ max_tokens: 300 }, { max_tokens: 300 }],
      [{ max_completion_tokens: 200 }, { max_completion_tokens: 200 }],
    ];
    for (const stream of [false, true]) {
      for (const [sent, expected] of cases) {
        const response = await fetch(`${server.url}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: "Bearer mock-token-alice", "content-type": "application/json" },
          body: JSON.stringify({ ...ask, ...sent, stream }),
        });
        await response.text();
        const got = lastBody(fake);
        expect([
          response.status,
          { max_tokens: got.max_tokens, max_completion_tokens: got.max_completion_tokens },
        ]).toEqual([200, { max_tokens: undefined, max_completion_tokens: undefined, ...expected }]);
      }
    }
  });

  test("models: curated list merged with the upstream's, through the SDK", async () => {
    const models = [];
    for await (const m of client(server).models.list()) models.push(m);
    const ids = models.map((m) => m.id);
    expect(ids).toContain("gpt-4o-mini");
    expect(ids).toContain("claude-3-5-haiku-latest");
    expect(ids).toContain("upstream-model-a");
    expect(ids.filter((id) => id === "llama3.2")).toHaveLength(1);
    expect(models.find((m) => m.id === "upstream-model-a") as unknown).toEqual({
      id: "upstream-model-a",
      object: "model",
      owned_by: "upstream-lab",
    });
    expect(new Set(models.map((m) => m.owned_by)).size).toBeGreaterThanOrEqual(4);
  });

  test("validation: messages are required; memory.limit is bounded", async () => {
    const [s1, b1] = await server.call("POST", "/v1/chat/completions", { body: { model: "m" } });
    expect(s1).toBe(400);
    expect(b1.error.code).toBe("invalid_request");
    expect(b1.error.message).toContain("messages");
    const [s2, b2] = await server.call("POST", "/v1/chat/completions", {
      body: { messages: [{ role: "user", content: "x" }], memory: { limit: 0 } },
    });
    expect(s2).toBe(400);
    expect(b2.error.message).toContain("limit");
  });

  test("scopes: completions and models need chat", async () => {
    const key = await server.services.credentials.createApiKey({ userId: "alice", scopes: ["usage:read"] });
    const [status, body] = await server.call("POST", "/v1/chat/completions", {
      token: key.key,
      body: { messages: [{ role: "user", content: "x" }] },
    });
    expect(status).toBe(403);
    expect(body.error.code).toBe("forbidden");
    expect((await server.call("GET", "/v1/models", { token: key.key }))[0]).toBe(403);
  });

  test("the OpenAPI document lists what the routes answer, 429/502/504 included", async () => {
    const [, doc] = await server.call("GET", "/openapi/json", { token: null });
    const statuses = (path: string, method: string) => Object.keys(doc.paths[path][method].responses);
    expect(statuses("/v1/chat/completions", "post")).toEqual([
      "200",
      "400",
      "401",
      "403",
      "404",
      "413",
      "415",
      "429",
      "500",
      "502",
      "503",
      "504",
    ]);
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
        body: JSON.stringify({
          messages: [{ role: "user", content: "hang" }],
          stream: true,
          memory: { enabled: false },
        }),
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

describe(`gateway errors on ${backend}`, () => {
  const GATEWAY_KEY = "gw-live-key-123";
  const leaky = `Incorrect API key provided: sk-gw-Zx81Qm2Lr7Tt9Vb3 (echo ${GATEWAY_KEY}) for http://svc:hunter2@10.20.30.40:4000/v1/chat/completions`;
  const secrets = ["sk-gw-Zx81Qm2Lr7Tt9Vb3", GATEWAY_KEY, "hunter2"];
  const logLines: string[] = [];
  let fake: FakeUpstream;
  let server: TestServer;
  beforeAll(async () => {
    fake = startFakeUpstream();
    const dataDir = tempDir();
    const env = {
      EMBEDDINGS_PROVIDER: "none",
      LLM_GATEWAY_URL: fake.url,
      LLM_GATEWAY_API_KEY: GATEWAY_KEY,
      ...(await databaseEnvFor(dataDir)),
    };
    const config = loadConfig({ dataDir, port: 0, allowMockTokens: true, logLevel: "debug" }, env);
    server = withClient(
      await startServer(config, { log: createLogger("debug", (line) => logLines.push(line)) }),
      dataDir,
    );
  });
  afterAll(async () => {
    await server.destroy();
    fake.stop();
  });

  /** Raw answers of a non-streaming and a streaming request while the gateway fails with `status`. */
  async function failing(status: number, headers: Record<string, string> = {}) {
    fake.failWith = { status, body: { error: { message: leaky, type: "invalid_request_error" } }, headers };
    try {
      const answer = async (stream: boolean) => {
        const response = await fetch(`${server.url}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: "Bearer mock-token-alice", "content-type": "application/json" },
          body: JSON.stringify({ messages: [{ role: "user", content: "x" }], memory: { enabled: false }, stream }),
        });
        return {
          status: response.status,
          text: await response.text(),
          retryAfter: response.headers.get("retry-after"),
          limit: response.headers.get("x-ratelimit-limit"),
        };
      };
      return [await answer(false), await answer(true)];
    } finally {
      fake.failWith = null;
    }
  }

  test("a gateway 4xx/5xx answers the spec's shape with a generic message and the upstream status, streaming or not; its text goes to the log only, redacted", async () => {
    const expected: Array<[number, number, string, string]> = [
      [400, 400, "invalid_request", "the model gateway refused the request (status 400)"],
      [404, 404, "not_found", "the model gateway refused the request (status 404)"],
      [422, 400, "invalid_request", "the model gateway refused the request (status 422)"],
      // The gateway refusing Mnemo's own key is not the caller's fault: their token is fine.
      [401, 502, "upstream_error", "the model gateway refused the request (status 401)"],
      [403, 502, "upstream_error", "the model gateway refused the request (status 403)"],
      [503, 502, "upstream_error", "the model gateway failed (status 503)"],
    ];
    for (const [upstreamStatus, status, code, message] of expected) {
      for (const answer of await failing(upstreamStatus)) {
        expect([answer.status, JSON.parse(answer.text), answer.limit]).toEqual([
          status,
          { error: { code, message } },
          "60",
        ]);
      }
    }
    const limited = await failing(429, { "retry-after": "7" });
    for (const answer of limited) {
      expect([answer.status, JSON.parse(answer.text), answer.retryAfter]).toEqual([
        429,
        {
          error: { code: "rate_limited", message: "the model gateway refused the request (status 429); retry in 7 s" },
        },
        "7",
      ]);
    }
    // Through the SDK: a BadRequestError carrying only our message.
    fake.failWith = { status: 400, body: { error: { message: leaky } } };
    try {
      const error = await client(server)
        .chat.completions.create({
          model: "m",
          messages: [{ role: "user", content: "x" }],
          memory: { enabled: false },
        } as any)
        .catch((e) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.error).toEqual({
        code: "invalid_request",
        message: "the model gateway refused the request (status 400)",
      });
    } finally {
      fake.failWith = null;
    }
    // The operator finds the upstream's words in the log, without its secrets.
    const logged = logLines.filter((line) => line.includes("the model gateway answered an error"));
    expect(logged.length).toBeGreaterThanOrEqual(expected.length * 2);
    expect(
      logged.every(
        (line) => line.includes("Incorrect API key provided") && line.includes("http://[redacted]@10.20.30.40:4000"),
      ),
    ).toBe(true);
    for (const secret of secrets) expect(logLines.filter((line) => line.includes(secret))).toEqual([]);
  });

  test("an error event in the middle of a stream reaches the client as a generic one; its text is logged redacted", async () => {
    fake.streamError = { error: { message: leaky, code: "internal" } };
    try {
      const response = await fetch(`${server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: "Bearer mock-token-alice", "content-type": "application/json" },
        body: JSON.stringify({ messages: [{ role: "user", content: "x" }], memory: { enabled: false }, stream: true }),
      });
      const text = await response.text();
      expect(response.status).toBe(200);
      expect(text).toContain(
        `data: ${JSON.stringify({ error: { code: "upstream_error", message: "the model gateway reported an error mid-stream" } })}\n\n`,
      );
      for (const secret of [...secrets, "10.20.30.40", "Incorrect API key"]) expect(text).not.toContain(secret);
      // The SDK raises it as an API error with our message.
      const stream = await client(server).chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "x" }],
        stream: true,
        memory: { enabled: false },
      } as any);
      const error = await (async () => {
        for await (const _ of stream as any);
      })().catch((e) => e);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect(error.message).toContain("the model gateway reported an error mid-stream");
      expect(logLines.some((line) => line.includes("mid-stream") && line.includes("Incorrect API key provided"))).toBe(
        true,
      );
      for (const secret of secrets) expect(logLines.filter((line) => line.includes(secret))).toEqual([]);
    } finally {
      fake.streamError = null;
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
      expect(await down.call("POST", "/v1/chat/completions", { body })).toEqual([
        502,
        { error: { code: "upstream_error", message: "the upstream model server could not be reached" } },
      ]);
      const error = await client(down)
        .chat.completions.create({ model: "m", messages: [{ role: "user", content: "anyone there?" }], stream: true })
        .catch((e) => e);
      expect(error.status).toBe(502);
      expect(await late.call("POST", "/v1/chat/completions", { body })).toEqual([
        504,
        { error: { code: "upstream_timeout", message: "the upstream model server did not answer within 100 ms" } },
      ]);
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
