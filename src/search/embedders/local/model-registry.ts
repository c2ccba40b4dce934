/**
 * The sentence-embedding models the local embedder knows how to run: where the hub
 * keeps them, which files make a model, and how its output becomes one vector.
 */

/** How token vectors become one sentence vector. */
export type Pooling = "mean" | "cls";

/** One file of a model, as laid out both on the hub and in `<modelsDir>/<model>/`. */
export interface ModelFile {
  /** Path relative to the model directory, with `/` separators. */
  path: string;
  /** Optional files are skipped when the hub answers 404. */
  required: boolean;
}

/** Everything needed to download, verify and run one model. */
export interface LocalModelSpec {
  /** Name used in config and on the command line, e.g. `all-MiniLM-L6-v2`. */
  name: string;
  /** Hub repository, fetched as `<hub>/<repo>/resolve/main/<file>`. */
  repo: string;
  files: ModelFile[];
  /** Size of the output vectors. */
  dimension: number;
  pooling: Pooling;
  /** Prepended to texts embedded with purpose `query` (asymmetric models such as bge). */
  queryPrefix: string;
  /** Longest input in tokens, [CLS] and [SEP] included; longer inputs are truncated. */
  maxSequenceLength: number;
  /**
   * Known sha256 of files, pinned so that a compromised or changed hub cannot slip in
   * other weights. Files missing here are checked against the hub's own sha256 header
   * and then recorded in the model's `manifest.json`.
   */
  pinnedSha256: Record<string, string>;
  /** Known sizes in bytes of pinned files: a file of another size is refused before it is hashed. */
  pinnedBytes: Record<string, number>;
}

/** The ONNX graph every model runs; the quantized export keeps downloads small (≈ 23 MB). */
export const MODEL_ONNX_FILE = "onnx/model_quantized.onnx";
/** Written after a verified download: `{ model, repo, files: { path: { sha256, size } } }`. */
export const MANIFEST_FILE = "manifest.json";

const BERT_FILES: ModelFile[] = [
  { path: "tokenizer.json", required: true },
  { path: "config.json", required: false },
  { path: MODEL_ONNX_FILE, required: true },
];

/** The default model. */
export const DEFAULT_LOCAL_MODEL = "all-MiniLM-L6-v2";

const MODELS: LocalModelSpec[] = [
  {
    name: "all-MiniLM-L6-v2",
    repo: "Xenova/all-MiniLM-L6-v2",
    files: BERT_FILES,
    dimension: 384,
    pooling: "mean",
    queryPrefix: "",
    maxSequenceLength: 256,
    // The quantized graph of Xenova/all-MiniLM-L6-v2 as published on the hub (its LFS sha256).
    // tokenizer.json and config.json are not pinned: no hash of them could be checked
    // independently; they are verified against the hub's own header and the manifest.
    pinnedSha256: { [MODEL_ONNX_FILE]: "afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1" },
    pinnedBytes: { [MODEL_ONNX_FILE]: 22_972_370 },
  },
  {
    name: "bge-small-en-v1.5",
    repo: "Xenova/bge-small-en-v1.5",
    files: BERT_FILES,
    dimension: 384,
    pooling: "cls",
    queryPrefix: "Represent this sentence for searching relevant passages: ",
    maxSequenceLength: 512,
    // Not pinned: no hash of its files could be checked independently.
    pinnedSha256: {},
    pinnedBytes: {},
  },
];

/** Names of all known models, default first. */
export function knownModelNames(): string[] {
  return MODELS.map((model) => model.name);
}

/** Options of {@link getModelSpec}. */
export interface ModelSpecOptions {
  /**
   * Check files against the pinned hashes and sizes (default true). `MNEMO_MODEL_PINS=off`
   * turns it off for one's own export of a model (and the tests' tiny stand-in); the hub's
   * header and the manifest are still checked.
   */
  pins?: boolean;
}

/**
 * Looks a model up by name.
 *
 * @throws Error naming the known models when `name` is not one of them.
 * @example
 * getModelSpec("bge-small-en-v1.5").pooling; // "cls"
 */
export function getModelSpec(name: string, options: ModelSpecOptions = {}): LocalModelSpec {
  const spec = MODELS.find((model) => model.name === name);
  if (!spec) {
    throw new Error(`unknown local model "${name}" (known: ${knownModelNames().join(", ")})`);
  }
  return options.pins === false ? { ...spec, pinnedSha256: {}, pinnedBytes: {} } : spec;
}
