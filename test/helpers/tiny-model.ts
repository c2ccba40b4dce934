/**
 * A tiny but real sentence-embedding model, built by the tests themselves: no weights can
 * be downloaded here. The ONNX graph takes the inputs a BERT export takes and returns
 * `last_hidden_state` [batch, seq, 384]: an embedding lookup plus the masked sum over the
 * sequence (a stand-in for attention, so that the [CLS] position depends on the text and
 * CLS pooling is meaningful). Words of one topic share components, so related texts get
 * related vectors.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { onnx } from "onnx-proto";

/** Output size; the same as MiniLM's and bge's, so the embedder's dimension check holds. */
export const TINY_DIMENSION = 384;

/** Words grouped by topic; words in one group get vectors that point the same way. */
export const TINY_TOPICS: Record<string, string[]> = {
  pets: ["cat", "dog", "kitten", "puppy", "pet", "vet", "fur"],
  food: ["pizza", "pasta", "cheese", "bread", "cook", "dinner", "recipe"],
  travel: ["car", "train", "flight", "trip", "paris", "hotel", "airport"],
  music: ["guitar", "piano", "song", "concert", "band"],
  work: ["meeting", "project", "deadline", "office", "email"],
};

const SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
const PUNCTUATION = [".", ",", "!", "?", "'", ":", "-", "@"];
const FUNCTION_WORDS = [
  "the",
  "a",
  "my",
  "and",
  "i",
  "to",
  "of",
  "is",
  "with",
  "for",
  "in",
  "on",
  "we",
  "went",
  "likes",
  "love",
  "played",
  "hello",
  "world",
  "represent",
  "this",
  "sentence",
  "searching",
  "relevant",
  "passages",
  "naive",
  "cafe",
  "un",
  "t",
  "don",
];
// Pieces that make WordPiece splits visible in tests: "unaffable" → un ##aff ##able.
const CONTINUATIONS = ["##s", "##ing", "##ed", "##aff", "##able", "##ly"];

/** The vocabulary in id order, as written to `vocab.txt`. */
export const TINY_VOCAB: string[] = [
  ...SPECIALS,
  ...PUNCTUATION,
  ...FUNCTION_WORDS,
  ...Object.values(TINY_TOPICS).flat(),
  ...CONTINUATIONS,
];

/** Small deterministic PRNG (mulberry32), so the weights are the same on every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
}

function embeddingMatrix(): Float32Array {
  const matrix = new Float32Array(TINY_VOCAB.length * TINY_DIMENSION);
  const topics = Object.entries(TINY_TOPICS);
  const blockSize = 32;
  TINY_VOCAB.forEach((token, id) => {
    const next = random(id + 1);
    const row = matrix.subarray(id * TINY_DIMENSION, (id + 1) * TINY_DIMENSION);
    for (let i = 0; i < TINY_DIMENSION; i++) row[i] = next() * 0.1;
    const topic = topics.findIndex(([, words]) => words.includes(token));
    if (topic >= 0) for (let i = 0; i < blockSize; i++) row[topic * blockSize + i] += 0.2;
  });
  return matrix;
}

function tensor(name: string, dataType: onnx.TensorProto.DataType, dims: number[], data: ArrayBufferView) {
  return onnx.TensorProto.create({
    name,
    dataType,
    dims,
    rawData: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  });
}

function valueInfo(name: string, elemType: onnx.TensorProto.DataType, dims: (string | number)[]) {
  return onnx.ValueInfoProto.create({
    name,
    type: {
      tensorType: {
        elemType,
        shape: { dim: dims.map((dim) => (typeof dim === "string" ? { dimParam: dim } : { dimValue: dim })) },
      },
    },
  });
}

function node(opType: string, inputs: string[], output: string, attribute: onnx.IAttributeProto[] = []) {
  return onnx.NodeProto.create({ opType, input: inputs, output: [output], name: output, attribute });
}

/** The serialized ONNX model (IR 8, opset 13). */
export function tinyOnnxModel(): Uint8Array {
  const { FLOAT, INT64 } = onnx.TensorProto.DataType;
  const typeEmbeddings = new Float32Array(2 * TINY_DIMENSION).map((_, i) => (i < TINY_DIMENSION ? 0 : 0.01));
  const graph = onnx.GraphProto.create({
    name: "tiny-sentence-encoder",
    input: [
      valueInfo("input_ids", INT64, ["batch", "sequence"]),
      valueInfo("attention_mask", INT64, ["batch", "sequence"]),
      valueInfo("token_type_ids", INT64, ["batch", "sequence"]),
    ],
    output: [valueInfo("last_hidden_state", FLOAT, ["batch", "sequence", TINY_DIMENSION])],
    initializer: [
      tensor("word_embeddings", FLOAT, [TINY_VOCAB.length, TINY_DIMENSION], embeddingMatrix()),
      tensor("type_embeddings", FLOAT, [2, TINY_DIMENSION], typeEmbeddings),
      tensor("axis_sequence", INT64, [1], new BigInt64Array([1n])),
      tensor("axis_hidden", INT64, [1], new BigInt64Array([2n])),
    ],
    node: [
      node("Gather", ["word_embeddings", "input_ids"], "words", [{ name: "axis", type: 2, i: 0 }]),
      node("Gather", ["type_embeddings", "token_type_ids"], "types", [{ name: "axis", type: 2, i: 0 }]),
      node("Add", ["words", "types"], "tokens"),
      node("Cast", ["attention_mask"], "mask", [{ name: "to", type: 2, i: FLOAT }]),
      node("Unsqueeze", ["mask", "axis_hidden"], "mask3"),
      node("Mul", ["tokens", "mask3"], "masked"),
      node("ReduceSum", ["masked", "axis_sequence"], "context", [{ name: "keepdims", type: 2, i: 1 }]),
      node("Add", ["tokens", "context"], "last_hidden_state"),
    ],
  });
  const model = onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ domain: "", version: 13 }],
    producerName: "mnemo-tests",
    graph,
  });
  return onnx.ModelProto.encode(model).finish();
}

/** A Hugging Face `tokenizer.json` for the tiny vocabulary, shaped like MiniLM's. */
export function tinyTokenizerJson(): string {
  const vocab = Object.fromEntries(TINY_VOCAB.map((token, id) => [token, id]));
  const special = (token: string) => ({ id: token, ids: [vocab[token]], tokens: [token] });
  return JSON.stringify({
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: SPECIALS.map((content) => ({ id: vocab[content], content, special: true })),
    normalizer: {
      type: "BertNormalizer",
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: "BertPreTokenizer" },
    post_processor: {
      type: "TemplateProcessing",
      special_tokens: { "[CLS]": special("[CLS]"), "[SEP]": special("[SEP]") },
    },
    decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    model: {
      type: "WordPiece",
      unk_token: "[UNK]",
      continuing_subword_prefix: "##",
      max_input_chars_per_word: 100,
      vocab,
    },
  });
}

/** Every file of the tiny model, keyed by its path in the hub layout. */
export function tinyModelFiles(): Record<string, Uint8Array> {
  const text = (value: string) => new TextEncoder().encode(value);
  return {
    "tokenizer.json": text(tinyTokenizerJson()),
    "vocab.txt": text(`${TINY_VOCAB.join("\n")}\n`),
    "config.json": text(JSON.stringify({ model_type: "bert", hidden_size: TINY_DIMENSION })),
    "onnx/model_quantized.onnx": tinyOnnxModel(),
  };
}

/**
 * Writes the tiny model into `dir` (the layout of `<modelsDir>/<model>/`) and returns `dir`.
 *
 * @example
 * writeTinyModel(join(modelsDir, "all-MiniLM-L6-v2"));
 */
export function writeTinyModel(dir: string, files = tinyModelFiles()): string {
  for (const [path, bytes] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), bytes);
  }
  return dir;
}
