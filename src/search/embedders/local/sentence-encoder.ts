/**
 * Runs one sentence-embedding model: WordPiece ids in, ONNX session, pooling, L2 norm out.
 * Used inside the encoder worker (and in-thread when no worker can be started).
 */
import { availableParallelism } from "node:os";
import { join } from "node:path";
import type { EmbedPurpose } from "../embedder.ts";
import { normalize } from "../embedder.ts";
import { type LocalModelSpec, MODEL_ONNX_FILE } from "./model-registry.ts";
import { loadOnnxRuntime } from "./ort-loader.ts";
import { WordPieceTokenizer } from "./wordpiece-tokenizer.ts";

type OnnxRuntime = typeof import("onnxruntime-node");
type InferenceSession = import("onnxruntime-node").InferenceSession;

/** What the encoder needs to load a model. */
export interface SentenceEncoderOptions {
  /** `<modelsDir>/<model>`, holding the tokenizer and `onnx/model_quantized.onnx`. */
  modelDir: string;
  spec: LocalModelSpec;
  /** Intra-op threads of the ONNX session; default: the number of cores. */
  threads?: number;
  /** Where a compiled binary caches the extracted onnxruntime library. */
  runtimeCacheDir: string;
}

const INPUT_NAMES = new Set(["input_ids", "attention_mask", "token_type_ids"]);
// Names used by Hugging Face / sentence-transformers exports for per-token states.
const TOKEN_OUTPUT_NAMES = ["last_hidden_state", "token_embeddings"];

/**
 * One loaded model. `encode` runs one batch; callers batch and order the work.
 *
 * @example
 * const encoder = await SentenceEncoder.load({ modelDir, spec, runtimeCacheDir });
 * const [vector] = await encoder.encode(["hello world"], "query");
 */
export class SentenceEncoder {
  private constructor(
    private readonly ort: OnnxRuntime,
    private readonly session: InferenceSession,
    private readonly tokenizer: WordPieceTokenizer,
    private readonly spec: LocalModelSpec,
    private readonly outputName: string,
  ) {}

  /** Loads the tokenizer and the ONNX session and checks the model's inputs and output size. */
  static async load(options: SentenceEncoderOptions): Promise<SentenceEncoder> {
    const tokenizer = await WordPieceTokenizer.fromDirectory(options.modelDir);
    const ort = await loadOnnxRuntime(options.runtimeCacheDir);
    const session = await ort.InferenceSession.create(join(options.modelDir, MODEL_ONNX_FILE), {
      intraOpNumThreads: options.threads ?? availableParallelism(),
      // Batches run one at a time; parallel branches would only oversubscribe the cores.
      interOpNumThreads: 1,
      executionMode: "sequential",
      graphOptimizationLevel: "all",
    });
    const unknownInput = session.inputNames.find((name) => !INPUT_NAMES.has(name));
    if (unknownInput) throw new Error(`model input "${unknownInput}" is not a BERT input`);
    const outputName = TOKEN_OUTPUT_NAMES.find((name) => session.outputNames.includes(name)) ?? session.outputNames[0];
    const encoder = new SentenceEncoder(ort, session, tokenizer, options.spec, outputName);
    const [probe] = await encoder.encode(["dimension check"], "document");
    if (probe.length !== options.spec.dimension) {
      throw new Error(`model outputs ${probe.length}-d vectors, expected ${options.spec.dimension}`);
    }
    return encoder;
  }

  /** Embeds one batch; vectors come back in input order, L2-normalised. */
  async encode(texts: string[], purpose: EmbedPurpose): Promise<Float32Array[]> {
    const prefix = purpose === "query" ? this.spec.queryPrefix : "";
    const sequences = texts.map((text) => this.tokenizer.encode(prefix + text, this.spec.maxSequenceLength));
    const batch = this.tokenizer.toBatch(sequences);
    const shape = [batch.batchSize, batch.sequenceLength];
    const inputs: Record<string, BigInt64Array> = {
      input_ids: batch.inputIds,
      attention_mask: batch.attentionMask,
      token_type_ids: batch.tokenTypeIds,
    };
    const feeds = Object.fromEntries(
      this.session.inputNames.map((name) => [name, new this.ort.Tensor("int64", inputs[name], shape)]),
    );
    const output = (await this.session.run(feeds))[this.outputName];
    const data = output.data as Float32Array;
    const dims = output.dims;
    // Some exports already pool ([batch, dim]); BERT exports return [batch, seq, dim].
    if (dims.length === 2) {
      return texts.map((_, row) => normalize(data.slice(row * dims[1], (row + 1) * dims[1])));
    }
    return texts.map((_, row) => normalize(this.pool(data, batch.attentionMask, row, dims[1], dims[2])));
  }

  /** Frees the native session. */
  async close(): Promise<void> {
    await this.session.release();
  }

  private pool(
    data: Float32Array,
    mask: BigInt64Array,
    row: number,
    seqLength: number,
    dimension: number,
  ): Float32Array {
    const rowOffset = row * seqLength * dimension;
    if (this.spec.pooling === "cls") return data.slice(rowOffset, rowOffset + dimension);
    const sum = new Float32Array(dimension);
    let count = 0;
    for (let token = 0; token < seqLength; token++) {
      if (mask[row * seqLength + token] === 0n) continue;
      count++;
      const offset = rowOffset + token * dimension;
      for (let i = 0; i < dimension; i++) sum[i] += data[offset + i];
    }
    for (let i = 0; i < dimension; i++) sum[i] /= Math.max(count, 1);
    return sum;
  }
}
