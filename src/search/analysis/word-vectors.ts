/**
 * The offline word-vector layer: 50,000 frequent English words with 100-dimensional GloVe
 * vectors (int8 with a per-word scale), shipped in the repository and the binary as
 * `word-vectors.bin` (built by scripts/build-word-vectors.ts), and the SIF text vector built
 * from them (Arora, Liang & Ma 2017: weighted mean, common component removed).
 *
 * The file loads lazily on the first call of {@link loadWordVectors} (one read of ~6 MB and
 * a word → row map) and stays cached for the process.
 */
import type { Logger } from "../../lib/log";
import { decodeWordVectors, SIF_A, zipfProbability, type WordVectorTables } from "./word-vector-file";
import wordVectorsPath from "./word-vectors.bin" with { type: "file" };

export { SIF_A, zipfProbability } from "./word-vector-file";

/** The loaded vectors. Words are looked up as the analyzer's `words()` gives them (folded, unstemmed). */
export interface WordVectors {
  /** Words with a vector. */
  readonly size: number;
  readonly dims: number;
  /** The corpus common component (unit length) that {@link textVector} removes. */
  readonly commonComponent: Float32Array;
  /** The word's vector, dequantised (a fresh array); undefined for a word without one. */
  vector(word: string): Float32Array | undefined;
  /** SIF weight a/(a+p(w)), p from the word's frequency rank by Zipf's law; ~1 for an unknown word. */
  weight(word: string): number;
  /** Adds the word's vector × its SIF weight (`weight`) to `into` without copying it; false for a word without one. */
  addWeighted(into: Float32Array, word: string): boolean;
}

class LoadedWordVectors implements WordVectors {
  readonly size: number;
  readonly dims: number;
  readonly commonComponent: Float32Array;
  private readonly rows = new Map<string, number>();

  constructor(private readonly tables: WordVectorTables) {
    this.size = tables.words.length;
    this.dims = tables.dims;
    this.commonComponent = tables.commonComponent;
    for (const [row, word] of tables.words.entries()) this.rows.set(word, row);
  }

  /** The row of a word; a possessive ("caroline's") falls back to its noun as GloVe split it. */
  private row(word: string): number | undefined {
    const row = this.rows.get(word);
    if (row !== undefined || !word.endsWith("'s")) return row;
    return this.rows.get(word.slice(0, -2));
  }

  vector(word: string): Float32Array | undefined {
    const row = this.row(word);
    if (row === undefined) return undefined;
    const { dims, quantised, scales } = this.tables;
    const scale = scales[row]!;
    const out = new Float32Array(dims);
    for (let d = 0, base = row * dims; d < dims; d++) out[d] = quantised[base + d]! * scale;
    return out;
  }

  addWeighted(into: Float32Array, word: string): boolean {
    // One lookup for both the vector and the weight: this runs for every word of every write.
    const row = this.row(word);
    if (row === undefined) return false;
    const { dims, quantised, scales } = this.tables;
    const scale = scales[row]! * this.weightAt(row);
    for (let d = 0, base = row * dims; d < dims; d++) into[d]! += quantised[base + d]! * scale;
    return true;
  }

  weight(word: string): number {
    return this.weightAt(this.row(word));
  }

  private weightAt(row: number | undefined): number {
    const rank = row === undefined ? this.tables.vocabularySize : this.tables.ranks[row]!;
    return SIF_A / (SIF_A + zipfProbability(rank, this.tables.vocabularySize));
  }
}

let loading: Promise<WordVectors> | null = null;
let unreadableLogged = false;

/**
 * The word vectors, read from the embedded file on the first call and cached after it.
 *
 * @throws Error when the file is missing or corrupt (a broken build); the next call retries.
 * @example
 * const vectors = await loadWordVectors();
 * const v = textVector(vectors, words("my dog loves the park"));
 */
export function loadWordVectors(): Promise<WordVectors> {
  loading ??= Bun.file(wordVectorsPath)
    .arrayBuffer()
    .then((buffer) => new LoadedWordVectors(decodeWordVectors(buffer)) as WordVectors)
    .catch((error: unknown) => {
      loading = null;
      throw error;
    });
  return loading;
}

/**
 * The SIF vector of a text's words: the mean of the known words' vectors weighted by
 * {@link WordVectors.weight}, minus its projection on the common component, L2-normalised.
 * Null when no word has a vector (or they cancel out).
 *
 * @example
 * const v = textVector(vectors, ["my", "puppy", "chewed", "a", "shoe"]); // Float32Array(100)
 */
export function textVector(vectors: WordVectors, words: string[]): Float32Array | null {
  const sum = new Float32Array(vectors.dims);
  let known = 0;
  for (const word of words) if (vectors.addWeighted(sum, word)) known++;
  if (known === 0) return null;
  const common = vectors.commonComponent;
  let projection = 0;
  for (let d = 0; d < sum.length; d++) projection += sum[d]! * common[d]!;
  let norm = 0;
  for (let d = 0; d < sum.length; d++) {
    sum[d]! -= projection * common[d]!;
    norm += sum[d]! * sum[d]!;
  }
  if (!(norm > 1e-12)) return null;
  const scale = 1 / Math.sqrt(norm);
  for (let d = 0; d < sum.length; d++) sum[d]! *= scale;
  return sum;
}

/** Cosine of two vectors of the same length (0 when either is zero). */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0,
    na = 0,
    nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
}

/**
 * The word vectors, or null when the shipped file cannot be read (a broken build): the
 * index writer then stores no word vectors and searches rank without them. Logged once.
 */
export async function readWordVectors(log: Logger): Promise<WordVectors | null> {
  try {
    return await loadWordVectors();
  } catch (error) {
    if (!unreadableLogged)
      log.warn("the word-vector file cannot be read; search ranks without word vectors", {
        reason: (error as Error).message,
      });
    unreadableLogged = true;
    return null;
  }
}
