import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeEmbedder, type FakeEmbedder } from "./helpers/fake-embedder";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";
import { waitFor } from "./helpers/wait";

let fake: FakeEmbedder;
beforeAll(() => {
  fake = startFakeEmbedder(64);
});
afterAll(() => fake.stop());

const openaiEnv = () => ({ EMBEDDINGS_PROVIDER: "openai", EMBEDDINGS_URL: fake.url, EMBEDDINGS_MODEL: "fake-64" });
const contents = (body: { results: Array<{ content: string }> }) => body.results.map((r) => r.content);

describe("semantic search through an OpenAI-compatible embeddings endpoint", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: openaiEnv() });
    for (const content of [
      "My dog loves the beach",
      "The quarterly budget meeting moved to Tuesday",
      "I bought a new automobile last week",
    ]) {
      expect((await server.call("POST", "/v1/memories", { body: { content } }))[0]).toBe(201);
    }
    await server.services.indexer.drain();
  });
  afterAll(() => server.destroy());

  test("a paraphrase with no shared word is found by the vectors (mode semantic, hybrid)", async () => {
    const [status, body] = await server.call("POST", "/v1/memories/search", { body: { query: "canine", limit: 1 } });
    expect(status).toBe(200);
    // No stored text contains "canine": only the vectors ranked, hence strategy "vector".
    expect([body.mode, body.strategy, contents(body)]).toEqual(["semantic", "vector", ["My dog loves the beach"]]);
    const [, car] = await server.call("POST", "/v1/memories/search", { body: { query: "vehicle purchase", limit: 1 } });
    expect(contents(car)).toEqual(["I bought a new automobile last week"]);
  });

  test("documents were embedded in batches, not one request per memory", () => {
    const documentBatches = fake.requests.filter((texts) => texts.some((t) => t.includes("quarterly budget")));
    expect(documentBatches).toHaveLength(1);
    expect(documentBatches[0]).toHaveLength(3);
  });

  test("an exact word still ranks its memory first", async () => {
    const [, body] = await server.call("POST", "/v1/memories/search", { body: { query: "quarterly budget" } });
    expect([body.strategy, contents(body)[0]]).toEqual(["hybrid", "The quarterly budget meeting moved to Tuesday"]);
  });

  test("context build reports the semantic mode too", async () => {
    const [, body] = await server.call("POST", "/v1/context/build", { body: { query: "puppy" } });
    expect([body.mode, body.items[0].content]).toEqual(["semantic", "My dog loves the beach"]);
  });
});

describe("when the embedder fails", () => {
  test("writes still succeed, search falls back to full text, and vectors are filled in later", async () => {
    const server = await startTestServer({ env: openaiEnv() });
    fake.failing = true;
    const [status] = await server.call("POST", "/v1/memories", { body: { content: "The hound sleeps by the fire" } });
    expect(status).toBe(201);
    const [, during] = await server.call("POST", "/v1/memories/search", { body: { query: "hound" } });
    expect([during.mode, during.strategy, contents(during)]).toEqual([
      "fulltext_fallback",
      "fulltext",
      ["The hound sleeps by the fire"],
    ]);
    await server.services.indexer.drain();
    expect((await server.services.indexer.stats()).pendingVector).toBe(1);

    fake.failing = false;
    await server.services.indexer.retryPostponed();
    await server.services.indexer.drain();
    expect((await server.services.indexer.stats()).pendingVector).toBe(0);
    const [, after] = await server.call("POST", "/v1/memories/search", { body: { query: "puppy" } });
    expect([after.mode, contents(after)]).toEqual(["semantic", ["The hound sleeps by the fire"]]);
    await server.destroy();
  });
});

describe("an embedder that stays down", () => {
  test("is tried again after a wait that doubles with each failure (1 s, 2 s, ...), not at every poll while rows never tried are due", async () => {
    const server = await startTestServer({ env: openaiEnv() });
    fake.failing = true;
    try {
      for (let i = 0; i < 300; i++)
        expect((await server.call("POST", "/v1/memories", { body: { content: `lighthouse note ${i}` } }))[0]).toBe(201);
      // Every change of the writer's outage record, until its third failure in a row.
      const seen = new Map<number, { lastAt: string; retryAt: string }>();
      await waitFor(
        async () => {
          const record = (await server.services.indexer.vectorOutage())?.outage;
          if (record) seen.set(record.failures, record);
          return (record?.failures ?? 0) >= 3;
        },
        { what: "three failed tries of the embedder", everyMs: 10, timeoutMs: 30_000 },
      );
      const tries = [...seen.entries()].sort((a, b) => a[0] - b[0]);
      expect(tries.map(([failures]) => failures).slice(0, 3)).toEqual([1, 2, 3]);
      for (const [failures, record] of tries) {
        // The wait after the n-th failure in a row: 2^(n-1) seconds.
        expect(Date.parse(record.retryAt) - Date.parse(record.lastAt)).toBe(1_000 * 2 ** (failures - 1));
        // And the next try came no sooner.
        const next = seen.get(failures + 1);
        if (next) expect(Date.parse(next.lastAt)).toBeGreaterThanOrEqual(Date.parse(record.retryAt));
      }
    } finally {
      fake.failing = false;
      await server.destroy();
    }
  }, 60_000);
});

describe("switching embedders", () => {
  test("memories written without an embedder are embedded after switching one on", async () => {
    const dataDir = tempDir();
    const plain = await startTestServer({ dataDir });
    await plain.call("POST", "/v1/memories", { body: { content: "Our physician retired in May" } });
    await plain.stop();

    const withVectors = await startTestServer({ dataDir, env: openaiEnv() });
    await withVectors.services.indexer.drain();
    const [, body] = await withVectors.call("POST", "/v1/memories/search", { body: { query: "doctor" } });
    expect([body.mode, contents(body)]).toEqual(["semantic", ["Our physician retired in May"]]);
    await withVectors.destroy();
  });
});

describe("the vector index", () => {
  test("is built once the table outgrows exact search, and agrees with exact search", async () => {
    const server = await startTestServer({ env: { ...openaiEnv(), MNEMO_VECTOR_INDEX_MIN_ROWS: "300" } });
    const topics = ["dog", "car", "film", "doctor", "happy", "garden", "piano", "river", "bread", "chess"];
    for (let i = 0; i < 400; i++) {
      const content = `${topics[i % 10]} note ${i} about ${topics[(i * 7) % 10]} and item${i % 37}`;
      expect((await server.call("POST", "/v1/memories", { body: { content } }))[0]).toBe(201);
    }
    await server.services.indexer.drain();
    await server.services.indexer.vectorIndexSettled();
    const table = server.services.search.internals.indexer.vectorTableFor("alice", "mem")!;
    expect(await server.services.search.internals.lance.hasVectorIndex(table)).toBe(true);

    const { fakeEmbedding } = await import("./helpers/fake-embedder");
    const where = null;
    let agreed = 0;
    for (const topic of topics) {
      const vector = Float32Array.from(fakeEmbedding(`${topic} item${topics.indexOf(topic)}`, 64));
      const indexed = await server.services.search.internals.lance.searchVectors(table, where, vector, 10);
      const exact = await server.services.search.internals.lance.searchVectors(table, where, vector, 10, {
        exact: true,
      });
      const exactIds = new Set(exact.map((hit) => hit.item_id));
      agreed += indexed.filter((hit) => exactIds.has(hit.item_id)).length;
    }
    // recall@10 of the indexed search against exact search, over ten queries
    expect(agreed / 100).toBeGreaterThanOrEqual(0.9);
    const [, body] = await server.call("POST", "/v1/memories/search", { body: { query: "canine", limit: 5 } });
    expect(body.mode).toBe("semantic");
    expect(body.results.every((r: { content: string }) => r.content.includes("dog"))).toBe(true);
    await server.destroy();
  });
});
