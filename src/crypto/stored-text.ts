import { decryptString, isCiphertextString, isEnvelope, openEnvelope, type Envelope } from "./aes-gcm";
import type { ClientKeys } from "./client-keys";

/** Opens a stored text value; null when it cannot (no key, wrong key). */
export type TextOpener = (value: string) => string | null;
/** The opener of a user's stored text with the request's client key (`X-Client-Key`, else the escrowed one); null without a key. */
export type NoteDecryptor = (userId: string, clientKeyHeader: string | null) => Promise<TextOpener | null>;

/** A stored value as an envelope (`{format, ciphertext}` as JSON text), or null. */
function envelopeOf(value: string): Envelope | null {
  const text = value.trim();
  if (!text.startsWith("{") || !text.includes("ciphertext")) return null;
  try {
    const parsed = JSON.parse(text);
    return isEnvelope(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** Whether a note's text is stored encrypted: an `iv:tag:ciphertext` string or an envelope. */
export const looksEncrypted = (value: string) => isCiphertextString(value.trim()) || envelopeOf(value) !== null;

/** Opens encrypted note text with the request's client key; a value the key does not open is null (skipped). */
export function noteDecryptor(clientKeys: ClientKeys): NoteDecryptor {
  return async (userId, header) => {
    const key = await clientKeys.resolve(userId, header);
    if (!key) return null;
    return (value) => {
      try {
        const envelope = envelopeOf(value);
        if (envelope) {
          const opened = openEnvelope(envelope, key);
          return typeof opened === "string" ? opened : JSON.stringify(opened);
        }
        return decryptString(value.trim(), key);
      } catch {
        return null;
      }
    };
  };
}
