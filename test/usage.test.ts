import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { countTokens } from "gpt-tokenizer";
import OpenAI from "openai";
import { runCli } from "./helpers/cli";
import { TEST_DATABASE_URL } from "./helpers/database";
import { FIXED_USAGE, startFakeUpstream, type FakeUpstream } from "./helpers/fake-upstream";
import { startTestServer, type TestServer } from "./helpers/server";

const backend = TEST_DATABASE_URL ? "PostgreSQL" : "the embedded store";
const month = () => new Date().toISOString().slice(0, 7);
const off = { enabled: false };
const ask = (content: string) => ({ messages: [{ role: "user", content }], memory: off });

/** Tokens by the documented fallback: 3 + per message (3 + role + content), and the reply's own tokens. */
const fallbackTokens = (messages: Array<{ role: string; content: string }>, reply: string) =>
  3 + messages.reduce((sum, m) => sum + 3 + countTokens(m.role) + countTokens(m.content), 0) + countTokens(reply);

async function drain(server: TestServer, user: string, body: Record<string, unknown>) {
  const stream = await new OpenAI({ apiKey: `mock-token-${user}`, baseURL: `${server.url}/v1`, maxRetries: 0 }).chat.completions.create({ model: "m", stream: true, ...body } as any);
  for await (const _ of stream as any);
}

describe(`usage and credits on ${backend}`, () => {
  let fake: FakeUpstream;
  let server: TestServer;
  beforeAll(async () => {
    fake = startFakeUpstream();
    server = await startTestServer({ env: { LLM_GATEWAY_URL: fake.url, MONTHLY_TOKEN_LIMIT: "40" } });
  });
  afterAll(async () => {
    await server.destroy();
    fake.stop();
  });

  test("upstream usage is metered for both modes; usage and credits report it", async () => {
    expect(await server.call("GET", "/v1/usage", { token: "mock-token-ann" })).toEqual([200, { month: month(), usage: { totalTokens: 0, requestCount: 0, uid: "ann", month: month() } }]);
    expect((await server.call("POST", "/v1/chat/completions", { token: "mock-token-ann", body: ask("one") }))[0]).toBe(200);
    await drain(server, "ann", ask("two"));
    const total = FIXED_USAGE.total_tokens * 2;
    expect(await server.call("GET", "/v1/usage", { token: "mock-token-ann" })).toEqual([200, { month: month(), usage: { totalTokens: total, requestCount: 2, uid: "ann", month: month() } }]);
    expect(await server.call("GET", "/v1/credits", { token: "mock-token-ann" })).toEqual([200, { used: total, limit: 40, remaining: 40 - total, month: month() }]);
    // Other users see only their own.
    expect((await server.call("GET", "/v1/usage", { token: "mock-token-ben" }))[1].usage.totalTokens).toBe(0);
  });

  test("without upstream usage, tokens are counted with the tokenizer (both modes)", async () => {
    fake.sendUsage = false;
    try {
      const messages = [{ role: "user", content: "count me, please" }];
      await server.call("POST", "/v1/chat/completions", { token: "mock-token-cat", body: { messages, memory: off } });
      const one = fallbackTokens(messages, fake.reply);
      expect((await server.call("GET", "/v1/usage", { token: "mock-token-cat" }))[1].usage).toMatchObject({ totalTokens: one, requestCount: 1 });
      await drain(server, "cat", { messages, memory: off });
      expect((await server.call("GET", "/v1/usage", { token: "mock-token-cat" }))[1].usage).toMatchObject({ totalTokens: one * 2, requestCount: 2 });
    } finally {
      fake.sendUsage = true;
    }
  });

  test("quota: refused with 429 before any upstream call, Retry-After until the month rolls over; the CLI override lifts it", async () => {
    const user = "dan";
    for (let i = 0; i < 3; i++) expect((await server.call("POST", "/v1/chat/completions", { token: `mock-token-${user}`, body: ask(`q${i}`) }))[0]).toBe(200);
    // 54 of 40 used: the next is refused.
    const sent = fake.requests.length;
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer mock-token-${user}`, "content-type": "application/json" },
      body: JSON.stringify(ask("one more")),
    });
    expect(response.status).toBe(429);
    const body = (await response.json()) as any;
    expect(body.error.code).toBe("rate_limited");
    expect(body.error.message).toContain("monthly token quota exhausted");
    const now = new Date();
    const untilNextMonth = (Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - now.getTime()) / 1000;
    const retryAfter = Number(response.headers.get("retry-after"));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(Math.abs(retryAfter - untilNextMonth)).toBeLessThan(60);
    expect(response.headers.get("x-ratelimit-limit")).toBe("60");
    expect(fake.requests.length).toBe(sent);
    expect((await server.call("GET", "/v1/credits", { token: `mock-token-${user}` }))[1]).toEqual({ used: 54, limit: 40, remaining: 0, month: month() });

    const set = await runCli(["usage", "set-limit", "--user", user, "100", "--data", server.dataDir, "--json"]);
    expect([set.exitCode, JSON.parse(set.stdout), set.stderr]).toEqual([0, { user, limit: 100, limitSource: "override" }, ""]);
    expect((await server.call("POST", "/v1/chat/completions", { token: `mock-token-${user}`, body: ask("again") }))[0]).toBe(200);
    expect((await server.call("GET", "/v1/credits", { token: `mock-token-${user}` }))[1]).toEqual({ used: 72, limit: 100, remaining: 28, month: month() });

    const shown = await runCli(["usage", "show", "--user", user, "--data", server.dataDir, "--json"]);
    expect(shown.exitCode).toBe(0);
    expect(JSON.parse(shown.stdout)).toEqual({
      user, month: month(), promptTokens: 44, completionTokens: 28, totalTokens: 72, requestCount: 4, limit: 100, limitSource: "override", remaining: 28,
    });
    const table = await runCli(["usage", "show", "--user", user, "--data", server.dataDir]);
    expect(table.stdout).toContain("100 (override)");
    const cleared = await runCli(["usage", "set-limit", "--user", user, "--default", "--data", server.dataDir, "--json"], { MONTHLY_TOKEN_LIMIT: "40" });
    expect(JSON.parse(cleared.stdout)).toEqual({ user, limit: 40, limitSource: "default" });
    const bad = await runCli(["usage", "set-limit", "--user", user, "lots", "--data", server.dataDir]);
    expect(bad.exitCode).not.toBe(0);
    expect(bad.stderr).toContain("not a whole number");
  });

  test("50 concurrent completions count exactly", async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        i % 2 ? server.call("POST", "/v1/chat/completions", { token: "mock-token-eve", body: ask(`c${i}`) }).then(([s]) => s) : drain(server, "eve", ask(`c${i}`)).then(() => 200),
      ),
    );
    expect(results.every((s) => s === 200)).toBe(true);
    // eve's limit is 40 tokens, but all 50 were admitted while she had used none.
    expect((await server.call("GET", "/v1/usage", { token: "mock-token-eve" }))[1].usage).toEqual({ totalTokens: 50 * 18, requestCount: 50, uid: "eve", month: month() });
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
