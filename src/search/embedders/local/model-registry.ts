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
    // No hashes pinned yet: none could be fetched on the machines this was written on.
    pinnedSha256: {},
  },
  {
    name: "bge-small-en-v1.5",
    repo: "Xenova/bge-small-en-v1.5",
    files: BERT_FILES,
    dimension: 384,
    pooling: "cls",
    queryPrefix: "Represent this sentence for searching relevant passages: ",
    maxSequenceLength: 512,
    pinnedSha256: {},
  },
];

/** Names of all known models, default first. */
export function knownModelNames(): string[] {
  return MODELS.map((model) => model.name);
}

/**
 * Looks a model up by name.
 *
 * @throws Error naming the known models when `name` is not one of them.
 * @example
 * getModelSpec("bge-small-en-v1.5").pooling; // "cls"
 */
export function getModelSpec(name: string): LocalModelSpec {
  const spec = MODELS.find((model) => model.name === name);
  if (!spec) {
    throw new Error(`unknown local model "${name}" (known: ${knownModelNames().join(", ")})`);
  }
  return spec;
}
