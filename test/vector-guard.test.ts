import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type FakeEmbedder, startFakeEmbedder } from "./helpers/fake-embedder";
import { startTestServer, type TestServer } from "./helpers/server";

/**
 * A weak embedding model must not push strong text matches down: with an endpoint that
 * answers random or constant vectors, the memories that contain the query's words stay on
 * top, and a memory found only by its (meaningless) vector is no hit. A model that agrees
 * with the text (the fake's default, words and synonyms) keeps its paraphrase hits.
 */
const FILLER = [
  "We watched the late game at Sam's place",
  "The printer on the third floor jammed again",
  "My sister repainted her kitchen yellow",
  "Traffic on the bridge was terrible this morning",
  "I finally fixed the squeaky door hinge",
  "Lunch was leftover curry from Sunday",
  "The neighbours adopted two noisy parrots",
  "Grandma sent a parcel of knitted socks",
  "The gym closes early on public holidays",
  "Our flight to Lisbon got delayed by an hour",
  "I started reading a thriller about a heist",
  "The tomatoes on the balcony are ripening",
  "We argued about whose turn it was to cook",
  "My phone screen cracked when it fell",
  "The landlord promised to fix the boiler",
  "Jo brought homemade lemon cake to the office",
  "The bus driver waved at the kids",
  "I renewed my library card yesterday",
  "A storm knocked the fence down last night",
  "We planned a picnic for the long weekend",
  "The cat next door keeps visiting us",
  "Our team lost the quiz by one point",
  "I booked a dentist appointment for Friday",
  "The bakery ran out of croissants early",
];
const MATCHES = [
  "Mira takes saxophone lessons every Thursday",
  "The saxophone teacher praised Mira's scales",
  "Mira sold her old saxophone to buy a better one",
];
const contents = (body: { results: Array<{ content: string }> }) => body.results.map((r) => r.content);

for (const vectors of ["random", "constant"] as const) {
  describe(`with an embedding model that answers ${vectors} vectors`, () => {
    let fake: FakeEmbedder;
    let server: TestServer;
    beforeAll(async () => {
      fake = startFakeEmbedder(64, vectors);
      server = await startTestServer({
        env: { EMBEDDINGS_PROVIDER: "openai", EMBEDDINGS_URL: fake.url, EMBEDDINGS_MODEL: `fake-${vectors}` },
      });
      for (const content of [...FILLER.slice(0, 12), ...MATCHES, ...FILLER.slice(12)]) {
        expect((await server.call("POST", "/v1/memories", { body: { content } }))[0]).toBe(201);
      }
      await server.services.indexer.drain();
    });
    afterAll(async () => {
      await server.destroy();
      fake.stop();
    });

    test("the memories with the query's words are the hits, on top", async () => {
      const [status, body] = await server.call("POST", "/v1/memories/search", {
        body: { query: "saxophone lessons", limit: 5 },
      });
      expect({
        status,
        mode: body.mode,
        top: contents(body).slice(0, 3).sort(),
        others: contents(body).slice(3),
      }).toEqual({
        status: 200,
        mode: "semantic",
        top: [...MATCHES].sort(),
        others: [],
      });
    });
  });
}

describe("with an embedding model that agrees with the text", () => {
  let fake: FakeEmbedder;
  let server: TestServer;
  beforeAll(async () => {
    fake = startFakeEmbedder(64);
    server = await startTestServer({
      env: { EMBEDDINGS_PROVIDER: "openai", EMBEDDINGS_URL: fake.url, EMBEDDINGS_MODEL: "fake-concepts" },
    });
    for (const content of [...FILLER, "My dog chased the postman", "The hound slept by the fire all afternoon"]) {
      expect((await server.call("POST", "/v1/memories", { body: { content } }))[0]).toBe(201);
    }
    await server.services.indexer.drain();
  });
  afterAll(async () => {
    await server.destroy();
    fake.stop();
  });

  test("its vectors still count: a memory sharing no word with the query is a hit, after the text match", async () => {
    const [, body] = await server.call("POST", "/v1/memories/search", { body: { query: "dog", limit: 3 } });
    expect(contents(body).slice(0, 2)).toEqual([
      "My dog chased the postman",
      "The hound slept by the fire all afternoon",
    ]);
  });
});
