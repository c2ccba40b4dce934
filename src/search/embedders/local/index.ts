/**
 * The local embedding provider: a sentence-embedding ONNX model run in-process, with a
 * pure-JS WordPiece tokenizer and model files fetched from a Hugging Face-style hub.
 *
 * Importing this module loads no native code; onnxruntime-node is imported by the
 * encoder (in its worker) when a model is loaded.
 */
export {
  createLocalEmbedder,
  type LocalEmbedder,
  type LocalEmbedderOptions,
  type LocalEmbedderState,
} from "./local-embedder.ts";
export {
  pullModel,
  DEFAULT_HUB_URL,
  ModelDownloadError,
  type PullModelOptions,
  type PullModelResult,
} from "./hub-download.ts";
export { installModelFromDir, type InstallModelOptions } from "./install-from-dir.ts";
export { listModels, checkModelFiles, type ModelStatus, type ModelState, type ModelManifest } from "./model-files.ts";
export { getModelSpec, knownModelNames, DEFAULT_LOCAL_MODEL, type LocalModelSpec } from "./model-registry.ts";
export { WordPieceTokenizer } from "./wordpiece-tokenizer.ts";
export { ENCODER_WORKER_ENTRY } from "./encoder-host.ts";
