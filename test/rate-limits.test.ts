import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnServer } from "./helpers/cli";
import { TEST_DATABASE_URL } from "./helpers/database";
import { startFakeUpstream, type FakeUpstream } from "./helpers/fake-upstream";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";
import { waitFor } from "./helpers/wait";

const backend = TEST_DATABASE_URL ? "PostgreSQL" : "the embedded store";
const body = JSON.stringify({ messages: [{ role: "user", content: "hi" }], memory: { enabled: false } });

async function complete(url: string, token: string) {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body,
  });
  const json = (await response.json()) as any;
  const h = (name: string) => response.headers.get(name);
  return {
    status: response.status,
    code: json?.error?.code as string | undefined,
    message: json?.error?.message as string | undefined,
    retryAfter: h("retry-after"),
    limit: h("x-ratelimit-limit"),
    remaining: h("x-ratelimit-remaining"),
    reset: h("x-ratelimit-reset"),
  };
}

let fake: FakeUpstream;
beforeAll(() => {
  fake = startFakeUpstream({ record: false });
});
afterAll(() => fake.stop());

describe(`rate limits on ${backend}`, () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { LLM_GATEWAY_URL: fake.url } });
  });
  afterAll(() => server.destroy());

  test("60 per minute per key: the 61st is refused with Retry-After and X-RateLimit-*; another key of the user still gets in", async () => {
    const key = (await server.services.credentials.createApiKey({ userId: "kim", scopes: ["chat"] })).key;
    const remaining: string[] = [];
    for (let i = 0; i < 60; i++) {
      const r = await complete(server.url, key);
      expect(r.status).toBe(200);
      remaining.push(r.remaining!);
      expect([r.limit, r.reset]).toEqual(["60", "60"]);
    }
    expect(remaining).toEqual(Array.from({ length: 60 }, (_, i) => String(59 - i)));
    const refused = await complete(server.url, key);
    expect([refused.status, refused.code, refused.limit, refused.remaining]).toEqual([429, "rate_limited", "60", "0"]);
    expect(refused.message).toContain("60 per minute per key");
    const retryAfter = Number(refused.retryAfter);
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
    expect(Number(refused.reset)).toBeGreaterThanOrEqual(retryAfter);
    // Refusals are not counted: still refused, still 60 in the window.
    expect((await complete(server.url, key)).status).toBe(429);
    const other = (await server.services.credentials.createApiKey({ userId: "kim", scopes: ["chat"] })).key;
    expect((await complete(server.url, other)).status).toBe(200);
    // Another user is not affected.
    expect((await complete(server.url, "mock-token-lou")).status).toBe(200);
  });
});

describe(`the per-principal limit on ${backend}`, () => {
  test("600 per hour per principal, across keys and under concurrency: exactly 600 admitted", async () => {
    const server = await startTestServer({
      env: { LLM_GATEWAY_URL: fake.url, MNEMO_RATE_LIMIT_KEY_PER_MINUTE: "100000" },
    });
    try {
      const keys = await Promise.all(
        [0, 1, 2].map(() =>
          server.services.credentials.createApiKey({ userId: "max", scopes: ["chat"] }).then((k) => k.key),
        ),
      );
      const statuses: number[] = [];
      for (let batch = 0; batch < 61; batch++) {
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) => complete(server.url, keys[(batch * 10 + i) % 3])),
        );
        statuses.push(...results.map((r) => r.status));
      }
      expect(statuses.filter((s) => s === 200)).toHaveLength(600);
      expect(statuses.filter((s) => s === 429)).toHaveLength(10);
      const refused = await complete(server.url, keys[0]);
      expect([refused.status, refused.limit, refused.remaining]).toEqual([429, "600", "0"]);
      expect(refused.message).toContain("600 per hour per principal");
      expect(Number(refused.retryAfter)).toBeGreaterThan(60);
    } finally {
      await server.destroy();
    }
  });
});

describe(`windows in the store of record on ${backend}`, () => {
  test("a restart does not reset the window", async () => {
    const dataDir = tempDir();
    const env = { LLM_GATEWAY_URL: fake.url, MNEMO_RATE_LIMIT_KEY_PER_MINUTE: "3" };
    const first = await startTestServer({ dataDir, env });
    for (let i = 0; i < 3; i++) expect((await complete(first.url, "mock-token-ned")).status).toBe(200);
    await first.stop();
    const second = await startTestServer({ dataDir, env });
    try {
      const r = await complete(second.url, "mock-token-ned");
      expect([r.status, r.code, r.remaining]).toEqual([429, "rate_limited", "0"]);
    } finally {
      await second.destroy();
    }
  });

  test("two replicas share one window: 30 concurrent requests over both, exactly 10 admitted", async () => {
    const dataDir = tempDir();
    const env = { LLM_GATEWAY_URL: fake.url, MNEMO_RATE_LIMIT_KEY_PER_MINUTE: "10" };
    const a = await startTestServer({ dataDir, env });
    // The other replica in a process of its own, as replicas run (in one process, a SQLite
    // busy wait of one would block the other's commit).
    const b = await spawnServer(["--data", dataDir, "--allow-mock-tokens"], env);
    try {
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) => complete(i % 2 ? a.url : b.url, "mock-token-oli")),
      );
      expect(results.filter((r) => r.status === 200)).toHaveLength(10);
      expect(results.filter((r) => r.status === 429 && r.code === "rate_limited")).toHaveLength(20);
      // The counts the replicas reported as remaining are 9..0, each once.
      expect(
        results
          .filter((r) => r.status === 200)
          .map((r) => Number(r.remaining))
          .sort((x, y) => x - y),
      ).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      // Usage counted by both replicas adds up in the one store.
      const [, usage] = await a.call("GET", "/v1/usage", { token: "mock-token-oli" });
      expect(usage.usage).toMatchObject({ totalTokens: 180, requestCount: 10 });
    } finally {
      b.proc.kill();
      await b.proc.exited;
      await a.destroy();
    }
  });
});

describe(`admission before retrieval on ${backend}`, () => {
  test("requests refused by the rate limit or the monthly quota run no memory search: the embedder sees only admitted requests' queries", async () => {
    const gateway = startFakeUpstream();
    // A retrieval budget no retrieval reaches: a busy machine must not turn "injected" into "timeout".
    const env = {
      LLM_GATEWAY_URL: gateway.url,
      EMBEDDINGS_PROVIDER: "openai",
      EMBEDDINGS_URL: gateway.url,
      EMBEDDINGS_MODEL: "fake-64",
      MNEMO_RATE_LIMIT_KEY_PER_MINUTE: "3",
      MNEMO_MEMORY_WINDOW_MS: "60000",
    };
    const server = await startTestServer({ env });
    const ask = async (token: string, query: string) => {
      const response = await fetch(`${server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ messages: [{ role: "user", content: query }] }),
      });
      await response.text();
      return [response.status, response.headers.get("x-svc-shimmer")];
    };
    const question = (n: number) => `question ${n}: what colour is the lighthouse?`;
    const searched = () => gateway.embedded.filter((text) => text.startsWith("question "));
    try {
      for (const user of ["ida", "jo"]) {
        expect(
          (
            await server.call("POST", "/v1/memories", {
              token: `mock-token-${user}`,
              body: { content: "the lighthouse is painted red" },
            })
          )[0],
        ).toBe(201);
      }
      // Until both have vectors, a search is full-text only and embeds nothing.
      for (const user of ["ida", "jo"]) {
        await waitFor(
          async () => {
            const [, found] = await server.call("POST", "/v1/memories/search", {
              token: `mock-token-${user}`,
              body: { query: "lighthouse painted" },
            });
            return found.mode === "semantic";
          },
          { what: `${user}'s memory to have its vector`, everyMs: 50 },
        );
      }
      // Three per minute for this credential: 3 admitted, 5 refused.
      const answers = [];
      for (let n = 1; n <= 8; n++) answers.push(await ask("mock-token-ida", question(n)));
      expect(answers).toEqual([...Array(3).fill([200, "injected"]), ...Array(5).fill([429, null])]);
      // Refused by the quota: jo has no tokens left.
      await server.services.usage.setLimit("jo", 0);
      expect(await ask("mock-token-jo", question(20))).toEqual([429, null]);
      // Admitted afterwards: ida's other credential, and jo with an allowance again.
      const key = (await server.services.credentials.createApiKey({ userId: "ida", scopes: ["chat"] })).key;
      expect(await ask(key, question(9))).toEqual([200, "injected"]);
      await server.services.usage.setLimit("jo", 100_000);
      expect(await ask("mock-token-jo", question(21))).toEqual([200, "injected"]);
      expect(searched()).toEqual([question(1), question(2), question(3), question(9), question(21)]);
    } finally {
      await server.destroy();
      gateway.stop();
    }
  });
});
