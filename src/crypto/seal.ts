import { encryptString, isCiphertextString, isEnvelope, sealJson } from "./aes-gcm";

/** What a write may carry, in the documents' own field names. */
interface SealableFields {
  documentPayload?: unknown;
  blocksPayload?: unknown;
  markdown?: string;
}

/** A payload the caller already encrypted is stored as sent, never sealed twice. */
const alreadySealed = (value: unknown) => isEnvelope(value) || isCiphertextString(value);

/**
 * `documentPayload` and `blocksPayload` become envelopes of their JSON, `markdown` an
 * `iv:tag:ct` string, in the contract's form (the client opens them with its key alone;
 * the writer tags each field where it is stored, see seal-tags.ts). Fields absent stay
 * absent; `indexableBlocks` and everything else are untouched (plaintext by design).
 */
export function sealFields<T extends SealableFields>(fields: T, key: Buffer): T {
  const out = { ...fields };
  if (out.documentPayload !== undefined && !alreadySealed(out.documentPayload))
    out.documentPayload = sealJson(out.documentPayload, key);
  if (out.blocksPayload !== undefined && !alreadySealed(out.blocksPayload))
    out.blocksPayload = sealJson(out.blocksPayload, key);
  if (out.markdown !== undefined && !isCiphertextString(out.markdown)) out.markdown = encryptString(out.markdown, key);
  return out;
}
