import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { all, sql, type Store } from "../src/db/store";
import { createEmbeddingCache, vectorKey } from "../src/search/indexing/embedding-cache-repository";
import { startFakeEmbedder, type FakeEmbedder } from "./helpers/fake-embedder";
import { mock, startTestServer, tempDir, type TestServer } from "./helpers/server";

let fake: FakeEmbedder;
beforeAll(() => {
  fake = startFakeEmbedder(16);
});
afterAll(() => fake.stop());

const embedderEnv = () => ({ EMBEDDINGS_PROVIDER: "openai", EMBEDDINGS_URL: fake.url, EMBEDDINGS_MODEL: "fake-16" });
/** How many embedding requests carried exactly this text. */
const embedsOf = (text: string) => fake.requests.filter((texts) => texts.includes(text)).length;
const cachedRows = async (store: Store, ownerId: string, text: string) =>
  (await all(store.db, sql`SELECT space_id FROM embedding_cache WHERE text_hash = ${vectorKey(ownerId, text)}`)).length;

describe("searches do not reveal what another user searched", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: embedderEnv() });
    for (const user of ["alice", "bob"])
      await server.call("POST", "/v1/memories", { token: mock(user), body: { content: `${user} keeps bees` } });
    await server.services.indexer.drain();
  });
  afterAll(() => server.destroy());

  test("the query-vector cache is per owner: Bob's search for Alice's query embeds it again", async () => {
    const query = "where did alice hide the spare key";
    for (const user of ["alice", "alice", "bob", "bob"]) {
      expect((await server.call("POST", "/v1/memories/search", { token: mock(user), body: { query } }))[0]).toBe(200);
    }
    // One embedding per user: each user's repeat is cached, Bob never gets Alice's cached vector.
    expect(embedsOf(query)).toBe(2);
  });

  test("Server-Timing has no embed entry, only reading the caller's own state and the search", async () => {
    const response = await fetch(`${server.url}/v1/memories/search`, {
      method: "POST",
      headers: { authorization: `Bearer ${mock("bob")}`, "content-type": "application/json" },
      body: JSON.stringify({ query: "bees" }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("server-timing")).toMatch(/^own;dur=\d+\.\d\d, search;dur=\d+\.\d\d$/);
  });

  test("stored vectors are per owner too: Bob writing Alice's text is embedded for Bob", async () => {
    const text = "the vault code is 4-8-15-16";
    await server.call("POST", "/v1/memories", { token: mock("alice"), body: { content: text } });
    await server.services.indexer.drain();
    await server.call("POST", "/v1/memories", { token: mock("bob"), body: { content: text } });
    await server.services.indexer.drain();
    expect(embedsOf(text)).toBe(2);
    expect([
      await cachedRows(server.services.store, "alice", text),
      await cachedRows(server.services.store, "bob", text),
    ]).toEqual([1, 1]);
  });
});

describe("the embedding cache lets go of deleted content", () => {
  test("a vector stays while any of the owner's memories has its text and goes with the last", async () => {
    const server = await startTestServer({ env: embedderEnv() });
    const text = "grandma's plum jam: two kilos of plums";
    const ids: string[] = [];
    // The same text twice: in two workspaces (one user stores an exact duplicate once per workspace).
    const [, ws] = await server.call("POST", "/v1/workspaces", { body: { name: "kitchen" } });
    for (const body of [
      { content: text },
      { content: text, workspaceId: ws.id },
      { content: "unrelated memory about trains" },
    ]) {
      ids.push((await server.call("POST", "/v1/memories", { body }))[1].id);
    }
    await server.services.indexer.drain();
    const store = server.services.store;
    expect(await cachedRows(store, "alice", text)).toBe(1);

    await server.call("DELETE", `/v1/memories/${ids[0]}`);
    await server.services.indexer.drain();
    expect(await cachedRows(store, "alice", text)).toBe(1);

    await server.call("DELETE", `/v1/memories/${ids[1]}`);
    await server.services.indexer.drain();
    expect([
      await cachedRows(store, "alice", text),
      await cachedRows(store, "alice", "unrelated memory about trains"),
    ]).toEqual([0, 1]);
    await server.destroy();
  });

  test("deletes made while no embedder is configured still remove the vector", async () => {
    const dataDir = tempDir();
    const withVectors = await startTestServer({ dataDir, env: embedderEnv() });
    const [, created] = await withVectors.call("POST", "/v1/memories", {
      body: { content: "the attic key is under the mat" },
    });
    await withVectors.services.indexer.drain();
    expect(await cachedRows(withVectors.services.store, "alice", "the attic key is under the mat")).toBe(1);
    await withVectors.stop();

    const plain = await startTestServer({ dataDir });
    await plain.call("DELETE", `/v1/memories/${created.id}`);
    await plain.services.indexer.drain();
    expect(await cachedRows(plain.services.store, "alice", "the attic key is under the mat")).toBe(0);
    await plain.destroy();
  });

  test("the cache is bounded: past maxRows the least recently used rows go", async () => {
    const server = await startTestServer();
    let clock = 0;
    const cache = createEmbeddingCache(server.services.store, { maxRows: 4, now: () => ++clock });
    const vector = new Float32Array([1, 0]);
    const put = (key: string) => cache.record("test-space", [[key, vector]], new Map([[`source-${key}`, [key]]]));
    for (const key of ["k1", "k2", "k3", "k4"]) await put(key);
    expect((await cache.getMany("test-space", ["k1"])).size).toBe(1);
    await put("k5");
    // Over the bound (5 > 4): trimmed to 90% of it (3), oldest use first: k2 and k3.
    const left = await all<{ text_hash: string }>(
      server.services.store.db,
      sql`SELECT text_hash FROM embedding_cache ORDER BY text_hash`,
    );
    expect(left.map((r) => r.text_hash)).toEqual(["k1", "k4", "k5"]);
    await server.destroy();
  });
});
