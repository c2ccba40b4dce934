import type { VectorOutage } from "../indexing/vector-outage";

/**
 * Whether the embedding model's vectors are being made, in one field: `off` (no embedder
 * configured: full text only), `ok`, or `unavailable: <reason>` while the index writer
 * cannot embed (the model missing with download off, offline, a failed download, the
 * endpoint down). The reason is the one the writer recorded on its last failed batch, so
 * every replica and `mnemo doctor` say the same thing; it clears with the first batch that
 * embeds (after `mnemo models install`, a pull, or the endpoint answering again).
 *
 * @example
 * vectorsStatus(true, { raw, outage: { reason: "local embedder: model … is unavailable", … } });
 * // "unavailable: local embedder: model … is unavailable"
 */
export type VectorsStatus = "off" | "ok" | `unavailable: ${string}`;

export function vectorsStatus(embedderConfigured: boolean, outage: { outage: VectorOutage } | null): VectorsStatus {
  if (!embedderConfigured) return "off";
  return outage ? `unavailable: ${outage.outage.reason}` : "ok";
}
