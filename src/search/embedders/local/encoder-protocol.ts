/** Messages between the local embedder and its encoder worker. */
import type { EmbedPurpose } from "../embedder.ts";
import type { SentenceEncoderOptions } from "./sentence-encoder.ts";

/** Main thread → worker. */
export type EncoderRequest =
  | { type: "load"; options: SentenceEncoderOptions }
  | { type: "encode"; id: number; texts: string[]; purpose: EmbedPurpose }
  | { type: "close" };

/** Worker → main thread. `failed` without an id answers `load`. */
export type EncoderResponse =
  | { type: "loaded" }
  | { type: "encoded"; id: number; vectors: Float32Array[] }
  | { type: "closed" }
  | { type: "failed"; id?: number; message: string };
