import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { countTokens } from "gpt-tokenizer";
import OpenAI from "openai";
import { runCli, spawnServer } from "./helpers/cli";
import { TEST_DATABASE_URL } from "./helpers/database";
import { FIXED_USAGE, startFakeUpstream, type FakeUpstream } from "./helpers/fake-upstream";
import { startTestServer, tempDir, withClient, type TestServer } from "./helpers/server";
import { waitFor } from "./helpers/wait";

const backend = TEST_DATABASE_URL ? "PostgreSQL" : "the embedded store";
const month = () => new Date().toISOString().slice(0, 7);
const off = { enabled: false };
const ask = (content: string) => ({ messages: [{ role: "user", content }], memory: off });

/** Tokens by the documented fallback: 3 + per message (3 + role + content), and the reply's own tokens; special-token text as text. */
const count = (text: string) => countTokens(text, { disallowedSpecial: new Set() });
const fallbackTokens = (messages: Array<{ role: string; content: string }>, reply: string) =>
  3 + messages.reduce((sum, m) => sum + 3 + count(m.role) + count(m.content), 0) + count(reply);

const until = <T>(what: string, probe: () => Promise<T>) => waitFor(probe, { what });

async function drain(server: TestServer, user: string, body: Record<string, unknown>) {
  const stream = await new OpenAI({
    apiKey: `mock-token-${user}`,
    baseURL: `${server.url}/v1`,
    maxRetries: 0,
  }).chat.completions.create({ model: "m", stream: true, ...body } as any);
  for await (const _ of stream as any);
}

describe(`usage and credits on ${backend}`, () => {
  let fake: FakeUpstream;
  let server: TestServer;
  beforeAll(async () => {
    fake = startFakeUpstream();
    // A request without max_tokens holds 4 completion tokens (the fake answers 7).
    server = await startTestServer({
      env: { LLM_GATEWAY_URL: fake.url, MONTHLY_TOKEN_LIMIT: "1000", MNEMO_COMPLETION_RESERVE_TOKENS: "4" },
    });
  });
  afterAll(async () => {
    await server.destroy();
    fake.stop();
  });

  test("upstream usage is metered for both modes; usage and credits report it", async () => {
    expect(await server.call("GET", "/v1/usage", { token: "mock-token-ann" })).toEqual([
      200,
      { month: month(), usage: { totalTokens: 0, requestCount: 0, uid: "ann", month: month() } },
    ]);
    expect((await server.call("POST", "/v1/chat/completions", { token: "mock-token-ann", body: ask("one") }))[0]).toBe(
      200,
    );
    await drain(server, "ann", ask("two"));
    const total = FIXED_USAGE.total_tokens * 2;
    expect(await server.call("GET", "/v1/usage", { token: "mock-token-ann" })).toEqual([
      200,
      { month: month(), usage: { totalTokens: total, requestCount: 2, uid: "ann", month: month() } },
    ]);
    expect(await server.call("GET", "/v1/credits", { token: "mock-token-ann" })).toEqual([
      200,
      { used: total, limit: 1000, remaining: 1000 - total, month: month() },
    ]);
    // The same, per UTC day (the web app's chart).
    const today = new Date().toISOString().slice(0, 10);
    const [, daily] = await server.call("GET", "/v1/usage/daily", { token: "mock-token-ann" });
    expect([daily.month, daily.days.at(-1)]).toEqual([month(), { day: today, totalTokens: total, requestCount: 2 }]);
    expect(daily.days.slice(0, -1).every((d: { totalTokens: number }) => d.totalTokens === 0)).toBe(true);
    // Other users see only their own.
    expect((await server.call("GET", "/v1/usage", { token: "mock-token-ben" }))[1].usage.totalTokens).toBe(0);
  });

  test("without upstream usage, tokens are counted with the tokenizer (both modes), special-token text included", async () => {
    fake.sendUsage = false;
    try {
      const messages = [{ role: "user", content: "count me, please" }];
      await server.call("POST", "/v1/chat/completions", { token: "mock-token-cat", body: { messages, memory: off } });
      const one = fallbackTokens(messages, fake.reply);
      expect((await server.call("GET", "/v1/usage", { token: "mock-token-cat" }))[1].usage).toMatchObject({
        totalTokens: one,
        requestCount: 1,
      });
      await drain(server, "cat", { messages, memory: off });
      expect((await server.call("GET", "/v1/usage", { token: "mock-token-cat" }))[1].usage).toMatchObject({
        totalTokens: one * 2,
        requestCount: 2,
      });
      // Text that spells a special token is counted as text (the tokenizer throws on it by default).
      const special = [{ role: "user", content: "what does <|endoftext|> mean?" }];
      expect(
        (
          await server.call("POST", "/v1/chat/completions", {
            token: "mock-token-cat",
            body: { messages: special, memory: off },
          })
        )[0],
      ).toBe(200);
      expect((await server.call("GET", "/v1/usage", { token: "mock-token-cat" }))[1].usage).toMatchObject({
        totalTokens: one * 2 + fallbackTokens(special, fake.reply),
        requestCount: 3,
      });
    } finally {
      fake.sendUsage = true;
    }
  });

  test("quota: a request whose estimate does not fit is refused with 429 before any upstream call; Retry-After until the month rolls over; the CLI override lifts it", async () => {
    const user = "dan";
    await server.services.usage.setLimit(user, 40);
    // Without max_tokens a request holds its prompt (at most 12 tokens here) and 4; it settles to 18.
    expect(
      (await server.call("POST", "/v1/chat/completions", { token: `mock-token-${user}`, body: ask("q0") }))[0],
    ).toBe(200);
    // 18 of 40 used: one that may use 8 + 30 does not fit in the 22 left.
    const sent = fake.requests.length;
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer mock-token-${user}`, "content-type": "application/json" },
      body: JSON.stringify({ ...ask("q1"), max_tokens: 30 }),
    });
    const prompt = fallbackTokens([{ role: "user", content: "q1" }], "");
    expect([response.status, await response.json()]).toEqual([
      429,
      {
        error: {
          code: "rate_limited",
          message: `monthly token quota: this request may use up to ${prompt + 30} tokens (${prompt} prompt + 30 completion) but 22 of 40 remain in ${month()}; set a lower max_tokens, or wait: it renews at the start of the next month (UTC)`,
        },
      },
    ]);
    const now = new Date();
    const untilNextMonth = (Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - now.getTime()) / 1000;
    const retryAfter = Number(response.headers.get("retry-after"));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(Math.abs(retryAfter - untilNextMonth)).toBeLessThan(60);
    // Refused by the quota: the rate limit did not count it either.
    expect([response.headers.get("x-ratelimit-limit"), response.headers.get("x-ratelimit-remaining")]).toEqual([
      "60",
      "59",
    ]);
    expect(fake.requests.length).toBe(sent);

    // A request may use more than it held (here 26 for 16): the month ends over its limit by that much.
    fake.usage = { prompt_tokens: 11, completion_tokens: 15, total_tokens: 26 };
    try {
      expect(
        (await server.call("POST", "/v1/chat/completions", { token: `mock-token-${user}`, body: ask("q2") }))[0],
      ).toBe(200);
    } finally {
      fake.usage = FIXED_USAGE;
    }
    expect((await server.call("GET", "/v1/credits", { token: `mock-token-${user}` }))[1]).toEqual({
      used: 44,
      limit: 40,
      remaining: 0,
      month: month(),
    });
    const [status, exhausted] = await server.call("POST", "/v1/chat/completions", {
      token: `mock-token-${user}`,
      body: ask("q3"),
    });
    expect([status, exhausted]).toEqual([
      429,
      {
        error: {
          code: "rate_limited",
          message: `monthly token quota exhausted: 44 of 40 tokens used in ${month()}; it renews at the start of the next month (UTC)`,
        },
      },
    ]);
    expect(fake.requests.length).toBe(sent + 1);

    const set = await runCli(["usage", "set-limit", "--user", user, "100", "--data", server.dataDir, "--json"]);
    expect([set.exitCode, JSON.parse(set.stdout), set.stderr]).toEqual([
      0,
      { user, limit: 100, limitSource: "override" },
      "",
    ]);
    expect(
      (await server.call("POST", "/v1/chat/completions", { token: `mock-token-${user}`, body: ask("again") }))[0],
    ).toBe(200);
    expect((await server.call("GET", "/v1/credits", { token: `mock-token-${user}` }))[1]).toEqual({
      used: 62,
      limit: 100,
      remaining: 38,
      month: month(),
    });

    const shown = await runCli(["usage", "show", "--user", user, "--data", server.dataDir, "--json"]);
    expect(shown.exitCode).toBe(0);
    expect(JSON.parse(shown.stdout)).toEqual({
      user,
      month: month(),
      promptTokens: 33,
      completionTokens: 29,
      totalTokens: 62,
      requestCount: 3,
      limit: 100,
      limitSource: "override",
      remaining: 38,
    });
    const table = await runCli(["usage", "show", "--user", user, "--data", server.dataDir]);
    expect(table.stdout).toContain("100 (override)");
    const cleared = await runCli(
      ["usage", "set-limit", "--user", user, "--default", "--data", server.dataDir, "--json"],
      { MONTHLY_TOKEN_LIMIT: "40" },
    );
    expect(JSON.parse(cleared.stdout)).toEqual({ user, limit: 40, limitSource: "default" });
    const bad = await runCli(["usage", "set-limit", "--user", user, "lots", "--data", server.dataDir]);
    expect(bad.exitCode).not.toBe(0);
    expect(bad.stderr).toContain("not a whole number");
  });

  test("50 concurrent completions count exactly", async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        i % 2
          ? server
              .call("POST", "/v1/chat/completions", { token: "mock-token-eve", body: ask(`c${i}`) })
              .then(([s]) => s)
          : drain(server, "eve", ask(`c${i}`)).then(() => 200),
      ),
    );
    expect(results.every((s) => s === 200)).toBe(true);
    expect((await server.call("GET", "/v1/usage", { token: "mock-token-eve" }))[1].usage).toEqual({
      totalTokens: 50 * 18,
      requestCount: 50,
      uid: "eve",
      month: month(),
    });
  });

  test("a request in progress holds its estimate: one that fits only without it is told to retry in 2 s, and gets in once the first settles", async () => {
    const user = "hub";
    await server.services.usage.setLimit(user, 40);
    // Each holds at most 3 + 3 + 4 + 5 = 15 prompt tokens and 10 completion tokens.
    const body = (content: string) => ({ ...ask(content), max_tokens: 10 });
    fake.hangStreams = true;
    const controller = new AbortController();
    try {
      const aborted = fake.nextAbort();
      const streaming = await fetch(`${server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer mock-token-${user}`, "content-type": "application/json" },
        body: JSON.stringify({ ...body("first"), stream: true }),
        signal: controller.signal,
      });
      expect(streaming.status).toBe(200);
      const held = 3 + 3 + 4 + 5 + 10;
      const response = await fetch(`${server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer mock-token-${user}`, "content-type": "application/json" },
        body: JSON.stringify(body("other")),
      });
      const prompt = fallbackTokens([{ role: "user", content: "other" }], "");
      expect([response.status, response.headers.get("retry-after"), await response.json()]).toEqual([
        429,
        "2",
        {
          error: {
            code: "rate_limited",
            message: `monthly token quota: this request may use up to ${prompt + 10} tokens (${prompt} prompt + 10 completion) but ${40 - held} of 40 remain in ${month()} (${held} held by requests in progress); set a lower max_tokens, or retry when requests in progress finish`,
          },
        },
      ]);
      controller.abort();
      await aborted;
    } finally {
      fake.hangStreams = false;
    }
    // The abandoned stream settles to what it produced (its prompt, counted), and its hold goes.
    const admitted = await until("the first request's hold to settle", async () => {
      const [status] = await server.call("POST", "/v1/chat/completions", {
        token: `mock-token-${user}`,
        body: body("other"),
      });
      return status === 200;
    });
    expect(admitted).toBe(true);
    const first = fallbackTokens([{ role: "user", content: "first" }], "");
    expect((await server.call("GET", "/v1/usage", { token: `mock-token-${user}` }))[1].usage).toMatchObject({
      totalTokens: first + 18,
      requestCount: 2,
    });
  });

  test("a hold is given back when the gateway refuses the request or the client leaves before the answer (both modes)", async () => {
    const user = "gil";
    // One request holds at most 12 + 10 = 22 of 30: two holds never fit at once.
    await server.services.usage.setLimit(user, 30);
    const body = { ...ask("hold"), max_tokens: 10 };
    fake.failWith = { status: 400, body: { error: { message: "no" } } };
    try {
      expect((await server.call("POST", "/v1/chat/completions", { token: `mock-token-${user}`, body }))[0]).toBe(400);
      expect(
        (
          await server.call("POST", "/v1/chat/completions", {
            token: `mock-token-${user}`,
            body: { ...body, stream: true },
          })
        )[0],
      ).toBe(400);
    } finally {
      fake.failWith = null;
    }
    // The client leaves while the gateway is still thinking.
    fake.delayMs = 5_000;
    try {
      const aborted = fake.nextAbort();
      const controller = new AbortController();
      const pending = fetch(`${server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer mock-token-${user}`, "content-type": "application/json" },
        body: JSON.stringify({ ...body, messages: [{ role: "user", content: "leaving" }] }),
        signal: controller.signal,
      }).catch((e) => e);
      await until(
        "the gateway to receive it",
        async () => fake.requests.at(-1)?.body.messages[0].content === "leaving",
      );
      controller.abort();
      await aborted;
      await pending;
    } finally {
      fake.delayMs = 0;
    }
    // Nothing was used and nothing stays held: a request that needs most of the quota gets in.
    const admitted = await until("the abandoned request's hold to be released", async () => {
      const [status] = await server.call("POST", "/v1/chat/completions", { token: `mock-token-${user}`, body });
      return status === 200;
    });
    expect(admitted).toBe(true);
    expect((await server.call("GET", "/v1/usage", { token: `mock-token-${user}` }))[1].usage).toMatchObject({
      totalTokens: 18,
      requestCount: 1,
    });
  });

  test("scopes: usage and credits need usage:read", async () => {
    const chatOnly = await server.services.credentials.createApiKey({ userId: "fay", scopes: ["chat"] });
    const [status, body] = await server.call("GET", "/v1/usage", { token: chatOnly.key });
    expect(status).toBe(403);
    expect(body.error.code).toBe("forbidden");
    expect((await server.call("GET", "/v1/credits", { token: chatOnly.key }))[0]).toBe(403);
    const usageOnly = await server.services.credentials.createApiKey({ userId: "fay", scopes: ["usage:read"] });
    expect((await server.call("GET", "/v1/credits", { token: usageOnly.key }))[0]).toBe(200);
    expect((await server.call("POST", "/v1/chat/completions", { token: usageOnly.key, body: ask("x") }))[0]).toBe(403);
    expect((await server.call("GET", "/v1/models", { token: usageOnly.key }))[0]).toBe(403);
    expect((await server.call("GET", "/v1/usage", { token: null }))[0]).toBe(401);
  });
});

describe(`the quota under concurrency on ${backend}`, () => {
  test("48 concurrent completions over two replicas (both modes): the month never passes its limit while each uses no more than it holds; refused ones never reach the gateway", async () => {
    const fake = startFakeUpstream();
    const dataDir = tempDir();
    // On PostgreSQL a connection for each of a replica's 24 requests: none waits for one (on a
    // busy machine the pool's 5 s wait for a free connection would run out: a 503, not a quota answer).
    const env = { LLM_GATEWAY_URL: fake.url, MONTHLY_TOKEN_LIMIT: "200", MNEMO_DATABASE_POOL: "24" };
    const a = await startTestServer({ dataDir, env });
    // The other replica in a process of its own, as replicas run (in one process, a SQLite
    // busy wait of one would block the other's commit).
    const replica = await spawnServer(["--data", dataDir, "--allow-mock-tokens"], env);
    const b = withClient({ ...a, url: replica.url }, dataDir);
    try {
      // Each holds its prompt (at most 3 + 3 + 4 + 3 = 13 tokens) and max_tokens 7, and uses 18.
      const body = (i: number) => ({ ...ask(`c${String(i).padStart(2, "0")}`), max_tokens: 7 });
      const results = await Promise.all(
        Array.from({ length: 48 }, async (_, i) => {
          const server = i % 2 ? a : b;
          if (i % 4 < 2) {
            const [status, answer] = await server.call("POST", "/v1/chat/completions", {
              token: "mock-token-fay",
              body: body(i),
            });
            return { status, code: answer?.error?.code };
          }
          const openai = new OpenAI({ apiKey: "mock-token-fay", baseURL: `${server.url}/v1`, maxRetries: 0 });
          try {
            const stream = await openai.chat.completions.create({ model: "m", stream: true, ...body(i) } as any);
            for await (const _ of stream as any);
            return { status: 200, code: undefined };
          } catch (error) {
            return {
              status: (error as { status: number }).status,
              code: (error as { error?: { code?: string } }).error?.code,
            };
          }
        }),
      );
      const admitted = results.filter((r) => r.status === 200).length;
      expect(results.filter((r) => r.status !== 200).every((r) => r.status === 429 && r.code === "rate_limited")).toBe(
        true,
      );
      // While some were refused, holds of 20 filled the 200: at least 10 got in.
      expect(admitted).toBeGreaterThanOrEqual(10);
      expect(admitted).toBeLessThan(48);
      const [, usage] = await a.call("GET", "/v1/usage", { token: "mock-token-fay" });
      expect(usage.usage).toMatchObject({ totalTokens: admitted * 18, requestCount: admitted });
      expect(usage.usage.totalTokens).toBeLessThanOrEqual(200);
      expect(fake.requests.length).toBe(admitted);
    } finally {
      replica.proc.kill();
      await replica.proc.exited;
      await a.destroy();
      fake.stop();
    }
  });
});
