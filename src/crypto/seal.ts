import { encryptString, isCiphertextString, isEnvelope, sealJson } from "./aes-gcm";
import type { SealBinding } from "./binding";

/** What a write may carry, in the documents' own field names. */
interface SealableFields {
  documentPayload?: unknown;
  blocksPayload?: unknown;
  markdown?: string;
}

/** A payload the caller already encrypted is stored as sent, never sealed twice. */
const alreadySealed = (value: unknown) => isEnvelope(value) || isCiphertextString(value);

/**
 * Spec §4 rule 5: `documentPayload` and `blocksPayload` become envelopes of their JSON,
 * `markdown` an `iv:tag:ct` string, each bound to its place (`bind(field)`: the owner, the
 * document and the field; see binding.ts). Fields absent stay absent; `indexableBlocks`
 * and everything else are untouched (they stay plaintext by design).
 */
export function sealFields<T extends SealableFields>(fields: T, key: Buffer, bind: (field: keyof SealableFields) => SealBinding): T {
  const out = { ...fields };
  if (out.documentPayload !== undefined && !alreadySealed(out.documentPayload)) out.documentPayload = sealJson(out.documentPayload, key, bind("documentPayload"));
  if (out.blocksPayload !== undefined && !alreadySealed(out.blocksPayload)) out.blocksPayload = sealJson(out.blocksPayload, key, bind("blocksPayload"));
  if (out.markdown !== undefined && !isCiphertextString(out.markdown)) out.markdown = encryptString(out.markdown, key, bind("markdown"));
  return out;
}
