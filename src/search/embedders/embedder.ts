/**
 * An embedding provider turns texts into vectors of one fixed space.
 *
 * Vectors from embedders with different `spaceId`s are never compared: the search
 * index keeps one vector table per space and re-embeds through the outbox when the
 * configured space changes.
 */
export interface Embedder {
  /** Provider name as configured: `none`, `openai` or `local`. */
  readonly provider: string;
  /**
   * Stable identifier of the vector space, e.g. `local:all-MiniLM-L6-v2` or
   * `openai:text-embedding-3-small`. Includes everything that changes the vectors.
   */
  readonly spaceId: string;
  /**
   * Embeds texts. `purpose` lets asymmetric models (bge) prefix queries.
   * Vectors are L2-normalised. Throws `EmbedderUnavailableError` when the provider
   * cannot answer now (model missing, endpoint down); callers fall back to full text.
   * `signal` abandons the work when the caller's deadline passes (a search's budget).
   */
  embed(texts: string[], purpose: EmbedPurpose, signal?: AbortSignal): Promise<Float32Array[]>;
  /** Releases native resources. */
  close?(): Promise<void>;
}

export type EmbedPurpose = "query" | "document";

/** The provider cannot embed right now; the caller degrades instead of failing. */
export class EmbedderUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EmbedderUnavailableError";
  }
}

/** L2-normalises a vector in place and returns it. */
export function normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i] * vector[i];
  const norm = Math.sqrt(sum) || 1;
  for (let i = 0; i < vector.length; i++) vector[i] /= norm;
  return vector;
}
