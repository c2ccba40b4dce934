import { decryptString, isCiphertextString, isEnvelope, openEnvelope } from "./aes-gcm";

/** Nesting deeper than this is left as it is (no stored value is that deep; it bounds the walk). */
const MAX_DEPTH = 64;

/**
 * Decrypts every encrypted value inside `value`: envelopes (to the JSON value they hold),
 * `iv:tag:ct` strings (to their text), inside arrays and objects at any depth; an object
 * with more fields than `format` and `ciphertext` keeps its shape (its `ciphertext` string
 * becomes the plaintext text). A chat
 * message's `encryptedContent` that opens becomes `content`. A value that fails
 * authentication (wrong key, a flipped bit) is left exactly as stored and counted in
 * `errors`: never partial plaintext. Decrypted values are not walked again.
 */
export function decryptDeep(value: unknown, key: Buffer): { value: unknown; errors: number } {
  let errors = 0;
  const attempt = <T>(fn: () => T, fallback: unknown): T | typeof fallback => {
    try {
      return fn();
    } catch {
      errors++;
      return fallback;
    }
  };
  const walk = (v: unknown, depth: number): unknown => {
    if (depth > MAX_DEPTH) return v;
    if (typeof v === "string") return isCiphertextString(v) ? attempt(() => decryptString(v, key), v) : v;
    if (Array.isArray(v)) return v.map((item) => walk(item, depth + 1));
    if (typeof v !== "object" || v === null) return v;
    // Only a bare envelope is replaced by its value; an object that merely carries `format`
    // and `ciphertext` among other fields (a legacy note list entry) has its fields walked.
    if (isEnvelope(v) && Object.keys(v).length === 2) return attempt(() => openEnvelope(v, key), v);
    const out: Record<string, unknown> = {};
    for (const [k, item] of Object.entries(v)) {
      if (k === "encryptedContent" && isCiphertextString(item)) {
        const before = errors;
        const text = attempt(() => decryptString(item, key), item);
        if (errors === before) out.content = text;
        else out[k] = item;
        continue;
      }
      out[k] = walk(item, depth + 1);
    }
    return out;
  };
  const result = walk(value, 0);
  return { value: result, errors };
}
