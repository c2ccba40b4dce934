import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mock, startTestServer, type TestServer } from "./helpers/server";

/**
 * Retrieval without an embedding model (EMBEDDINGS_PROVIDER=none, as in every test): the
 * analyzer, the word-vector layer that ships in Mnemo, and dates in queries.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.destroy());

async function remember(user: string, content: string, timestamp?: string) {
  const [status, body] = await server.call("POST", "/v1/memories", {
    token: mock(user),
    body: { content, ...(timestamp ? { timestamp } : {}) },
  });
  expect(status).toBe(201);
  return body.id as string;
}
async function search(user: string, query: string, extra: Record<string, unknown> = {}) {
  const [status, body] = await server.call("POST", "/v1/memories/search", {
    token: mock(user),
    body: { query, ...extra },
  });
  expect(status).toBe(200);
  return body as {
    results: Array<{ id: string; content: string; score: number; signals: Record<string, number> }>;
    signals: string[];
  };
}

describe("the analyzer", () => {
  test("'allergies' finds 'allergic' (and 'allergy'); accents fold; stop words do not match", async () => {
    const allergic = await remember("ana", "My sister is allergic to peanuts");
    const allergy = await remember("ana", "I have a mild pollen allergy in spring");
    await remember("ana", "The café on the corner serves crêpes");
    const found = await search("ana", "what about allergies?", { signals: ["text"] });
    expect(found.results.map((r) => r.id).sort()).toEqual([allergic, allergy].sort());
    expect((await search("ana", "cafe crepes", { signals: ["text"] })).results.map((r) => r.content)).toEqual([
      "The café on the corner serves crêpes",
    ]);
    expect((await search("ana", "what is the", { signals: ["text"] })).results).toEqual([]);
  });
});

describe("the word-vector layer", () => {
  test("finds a paraphrase that shares no word ('hobbies' → 'passion'), below real matches; off with signals: ['text']", async () => {
    const passion = await remember("ben", "Painting is my real passion");
    await remember("ben", "The mortgage payment is due on Friday");
    const found = await search("ben", "hobbies");
    expect(found.signals).toEqual(["text", "words"]);
    expect(found.results.map((r) => r.id)).toEqual([passion]);
    expect(found.results[0].signals.text).toBe(0);
    expect(found.results[0].signals.words).toBeGreaterThanOrEqual(0.35);
    expect((await search("ben", "hobbies", { signals: ["text"] })).results).toEqual([]);
  });

  test("reorders keyword matches by meaning, and stays within the user: another user's closer memory is never a candidate", async () => {
    const pets = await remember("cleo", "We adopted a puppy and a kitten, our first pets");
    const taxes = await remember("cleo", "Pets are not deductible on the tax return");
    await remember("dan", "My pets: a puppy, a kitten and a hamster");
    const found = await search("cleo", "do you have any pets, like a dog?");
    expect(found.results.map((r) => r.id)).toEqual([pets, taxes]);
    expect(found.results[0].signals.words).toBeGreaterThan(found.results[1].signals.words);
    // By the words alone the other one comes first (it is shorter): the word vectors changed the order.
    expect(
      (await search("cleo", "do you have any pets, like a dog?", { signals: ["text"] })).results.map((r) => r.id),
    ).toEqual([taxes, pets]);
  });
});

describe("dates in queries", () => {
  test("a memory's timestamp is what 'in May 2023' matches; the time signal ranks it first", async () => {
    const may = await remember("eve", "We went hiking in the mountains", "2023-05-14T10:00:00Z");
    const june = await remember("eve", "We went hiking by the sea", "2023-06-20T10:00:00Z");
    await remember("eve", "Bought a new kettle", "2022-01-03");
    const found = await search("eve", "where did we go hiking in May 2023?");
    expect(found.signals).toContain("time");
    expect(found.results.map((r) => r.id).slice(0, 2)).toEqual([may, june]);
    expect(found.results[0].signals.time).toBe(1);
    expect(found.results[1].signals.time).toBeLessThan(1);
    // A date alone finds what happened then, with no shared word.
    const then = await search("eve", "May 2023");
    expect(then.results[0].id).toBe(may);
  });
});
