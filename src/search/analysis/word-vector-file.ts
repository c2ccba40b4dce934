/**
 * The layout of `word-vectors.bin` (little-endian), shared by the build script and the loader:
 *
 * | bytes            | what                                                                 |
 * |------------------|----------------------------------------------------------------------|
 * | 4                | magic "MNWV"                                                         |
 * | 4 × u32          | version (1), count (words kept), dims, vocabulary size of the source |
 * | 4 × u32          | byte length of the words block, 3 reserved zeros                     |
 * | dims × f32       | the common component (unit length)                                   |
 * | count × f32      | per-word scale: a dimension is `int8 × scale`                        |
 * | count × u32      | per-word frequency rank in the source vocabulary (1 = most frequent) |
 * | count × dims i8  | the quantised vectors, word after word                               |
 * | words block      | the words in UTF-8, separated by "\n", in the order above            |
 */
/** SIF's smoothing constant: a word's weight is a / (a + p(w)). */
export const SIF_A = 1e-3;

/** A word's probability by Zipf's law (exponent 1) from its frequency rank among `vocabularySize` words. */
export function zipfProbability(rank: number, vocabularySize: number): number {
  return 1 / (rank * (Math.log(vocabularySize) + 0.5772156649));
}

export const WORD_VECTOR_MAGIC = "MNWV";
export const WORD_VECTOR_VERSION = 1;
export const HEADER_BYTES = 32;

/** What the file holds, decoded into typed views over one buffer (no copy). */
export interface WordVectorTables {
  dims: number;
  /** Words in the source vocabulary: the Zipf law's N. */
  vocabularySize: number;
  commonComponent: Float32Array;
  scales: Float32Array;
  ranks: Uint32Array;
  quantised: Int8Array;
  words: string[];
}

/** Serialises the tables (the build script's half). */
export function encodeWordVectors(tables: WordVectorTables): Uint8Array {
  const count = tables.words.length;
  const wordBytes = new TextEncoder().encode(tables.words.join("\n"));
  const total = HEADER_BYTES + tables.dims * 4 + count * 8 + count * tables.dims + wordBytes.length;
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  out.set(new TextEncoder().encode(WORD_VECTOR_MAGIC), 0);
  for (const [i, value] of [
    WORD_VECTOR_VERSION,
    count,
    tables.dims,
    tables.vocabularySize,
    wordBytes.length,
  ].entries()) {
    view.setUint32(4 + i * 4, value, true);
  }
  let offset = HEADER_BYTES;
  for (const value of [...tables.commonComponent, ...tables.scales]) {
    view.setFloat32(offset, value, true);
    offset += 4;
  }
  for (const value of tables.ranks) {
    view.setUint32(offset, value, true);
    offset += 4;
  }
  out.set(new Uint8Array(tables.quantised.buffer, tables.quantised.byteOffset, tables.quantised.length), offset);
  offset += tables.quantised.length;
  out.set(wordBytes, offset);
  return out;
}

/**
 * Reads the tables from the file's bytes. The typed arrays view `buffer` directly (the
 * float and integer blocks are 4-byte aligned by construction).
 *
 * @throws Error when the bytes are not a word-vector file of this version.
 */
export function decodeWordVectors(buffer: ArrayBuffer): WordVectorTables {
  const view = new DataView(buffer);
  const magic = new TextDecoder().decode(new Uint8Array(buffer, 0, 4));
  const version = view.getUint32(4, true);
  if (magic !== WORD_VECTOR_MAGIC || version !== WORD_VECTOR_VERSION)
    throw new Error("word-vectors.bin: not a word-vector file of version 1");
  const count = view.getUint32(8, true);
  const dims = view.getUint32(12, true);
  const vocabularySize = view.getUint32(16, true);
  const wordBytes = view.getUint32(20, true);
  let offset = HEADER_BYTES;
  const commonComponent = new Float32Array(buffer, offset, dims);
  offset += dims * 4;
  const scales = new Float32Array(buffer, offset, count);
  offset += count * 4;
  const ranks = new Uint32Array(buffer, offset, count);
  offset += count * 4;
  const quantised = new Int8Array(buffer, offset, count * dims);
  offset += count * dims;
  const words = new TextDecoder().decode(new Uint8Array(buffer, offset, wordBytes)).split("\n");
  if (words.length !== count || offset + wordBytes !== buffer.byteLength)
    throw new Error("word-vectors.bin: truncated or corrupt");
  return { dims, vocabularySize, commonComponent, scales, ranks, quantised, words };
}
