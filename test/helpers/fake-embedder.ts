/**
 * A real local HTTP server speaking the OpenAI embeddings API, for tests and benches.
 *
 * Vectors are deterministic bags of "concepts": each word maps to a concept (words in
 * one synonym group share one), hashed into `dimension` buckets. So "canine" and "dog"
 * embed alike though they share no letters: only the vector path can match them.
 */
const SYNONYMS = [
  ["dog", "dogs", "canine", "puppy", "hound"],
  ["car", "cars", "automobile", "vehicle"],
  ["happy", "glad", "joyful", "cheerful"],
  ["physician", "doctor", "medic"],
  ["film", "movie", "cinema"],
];
const CONCEPT = new Map<string, string>();
for (const group of SYNONYMS) for (const word of group) CONCEPT.set(word, group[0]);

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

export function fakeEmbedding(text: string, dimension: number): number[] {
  const vector = new Array(dimension).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const concept = CONCEPT.get(word) ?? word;
    const h = hash(concept);
    vector[h % dimension] += 1;
    vector[(h >>> 8) % dimension] += 0.5;
  }
  if (vector.every((v) => v === 0)) vector[0] = 1;
  const norm = Math.sqrt(vector.reduce((s, v) => s + v * v, 0));
  return vector.map((v) => v / norm);
}

export interface FakeEmbedder {
  url: string;
  /** Texts embedded so far, in order. */
  requests: string[][];
  /** When true, every request answers 503. */
  failing: boolean;
  stop(): void;
}

/**
 * What the fake answers: `concepts` (the default: words and their synonyms), or a deliberately
 * useless model, `random` (like random weights: high cosines unrelated to meaning) or
 * `constant` (the same vector for every text).
 */
export type FakeVectors = "concepts" | "random" | "constant";

/**
 * Like a network with random weights: every vector close to one shared direction (cosines
 * around 0.8, as such a model's outputs are) plus noise seeded by the text, so the scores
 * spread, high, but say nothing about meaning.
 */
function randomEmbedding(text: string, dimension: number): number[] {
  let state = hash(text);
  const shared = (Math.sqrt(dimension / 12) * 2) / Math.sqrt(dimension);
  const vector = Array.from({ length: dimension }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return shared + state / 2 ** 32 - 0.5;
  });
  const norm = Math.sqrt(vector.reduce((s, v) => s + v * v, 0));
  return vector.map((v) => v / norm);
}

const embeddings: Record<FakeVectors, (text: string, dimension: number) => number[]> = {
  concepts: fakeEmbedding,
  random: randomEmbedding,
  constant: (_text, dimension) => Array.from({ length: dimension }, (_, i) => (i === 0 ? 1 : 0)),
};

export function startFakeEmbedder(dimension = 64, vectors: FakeVectors = "concepts"): FakeEmbedder {
  const state: FakeEmbedder = { url: "", requests: [], failing: false, stop: () => server.stop(true) };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      if (request.method !== "POST" || url.pathname !== "/v1/embeddings")
        return new Response("not found", { status: 404 });
      if (state.failing) return new Response("unavailable", { status: 503 });
      const body = (await request.json()) as { input: string | string[]; model: string };
      const inputs = Array.isArray(body.input) ? body.input : [body.input];
      state.requests.push(inputs);
      return Response.json({
        object: "list",
        model: body.model,
        data: inputs.map((text, index) => ({
          object: "embedding",
          index,
          embedding: embeddings[vectors](text, dimension),
        })),
      });
    },
  });
  state.url = `http://127.0.0.1:${server.port}/v1`;
  return state;
}
