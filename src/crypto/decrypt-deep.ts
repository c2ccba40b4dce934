import { decryptString, isBoundString, isCiphertextString, isEnvelope, openEnvelope } from "./aes-gcm";
import type { PathKey, SealLocator } from "./binding";

/** Nesting deeper than this is left as it is (no stored value is that deep; it bounds the walk). */
const MAX_DEPTH = 64;

/** No binding anywhere: only unbound (untagged) values open. */
const NOWHERE: SealLocator = () => null;

/**
 * Decrypts every encrypted value inside `value`: envelopes (to the JSON value they hold),
 * `iv:tag:ct` strings (to their text), inside arrays and objects at any depth; an object
 * with more fields than `format` and `ciphertext` keeps its shape (its `ciphertext` string
 * becomes the plaintext text). A chat
 * message's `encryptedContent` that opens becomes `content`. A value that fails
 * authentication (wrong key, a flipped bit) is left exactly as stored and counted in
 * `errors`: never partial plaintext. Decrypted values are not walked again.
 *
 * A bound value (`v2:`, what the server seals) opens only with the binding `locate` gives
 * for the path it sits at: moved to another record, field or user (or where the route
 * names no binding), it fails like a wrong key. Unbound values open wherever they are.
 */
export function decryptDeep(value: unknown, key: Buffer, locate: SealLocator = NOWHERE): { value: unknown; errors: number } {
  let errors = 0;
  const path: PathKey[] = [];
  const attempt = <T>(fn: () => T, fallback: unknown): T | typeof fallback => {
    try {
      return fn();
    } catch {
      errors++;
      return fallback;
    }
  };
  // The binding is asked for only when a bound value is met (most values are not).
  const bindingOf = (ciphertext: string) => (isBoundString(ciphertext) ? locate(path) : null);
  const open = (v: string) => decryptString(v, key, bindingOf(v));
  const walk = (v: unknown, depth: number): unknown => {
    if (depth > MAX_DEPTH) return v;
    if (typeof v === "string") return isCiphertextString(v) ? attempt(() => open(v), v) : v;
    if (Array.isArray(v)) {
      return v.map((item, i) => {
        path.push(i);
        const out = walk(item, depth + 1);
        path.pop();
        return out;
      });
    }
    if (typeof v !== "object" || v === null) return v;
    // Only a bare envelope is replaced by its value; an object that merely carries `format`
    // and `ciphertext` among other fields (a legacy note list entry) has its fields walked.
    if (isEnvelope(v) && Object.keys(v).length === 2) return attempt(() => openEnvelope(v, key, bindingOf(v.ciphertext)), v);
    const out: Record<string, unknown> = {};
    for (const [k, item] of Object.entries(v)) {
      path.push(k);
      if (k === "encryptedContent" && isCiphertextString(item)) {
        const before = errors;
        const text = attempt(() => open(item), item);
        if (errors === before) out.content = text;
        else out[k] = item;
      } else {
        out[k] = walk(item, depth + 1);
      }
      path.pop();
    }
    return out;
  };
  const result = walk(value, 0);
  return { value: result, errors };
}
