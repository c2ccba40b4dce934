import { decryptString, isBoundString, isCiphertextString, isEnvelope, openEnvelope } from "./aes-gcm";
import type { PathKey, SealBinding, SealLocator } from "./binding";
import { untaggedCiphertexts, type TagCheck } from "./seal-tags";

/** Nesting deeper than this is left as it is (no stored value is that deep; it bounds the walk). */
const MAX_DEPTH = 64;
/** Stored fields sit this near the top of a response (`[3, "encryptedContent"]`, `["document", "markdown"]`). */
const FIELD_DEPTH = 4;

/** No stored field anywhere: only untagged values open, as the client's own. */
const NOWHERE: SealLocator = () => null;

const pathKey = (path: readonly PathKey[]) => JSON.stringify(path);

/** A stored field of a response that holds untagged ciphertext: its place and what it holds. */
export interface LocatedField {
  path: string;
  binding: SealBinding;
  ciphertexts: string[];
}

/** The stored fields of a response that hold untagged ciphertext (what their tags are checked for). */
export function locatedFields(value: unknown, locate: SealLocator): LocatedField[] {
  const found: LocatedField[] = [];
  const path: PathKey[] = [];
  const walk = (v: unknown) => {
    if (path.length > 0) {
      const binding = locate(path);
      if (binding) {
        const ciphertexts = untaggedCiphertexts(v);
        if (ciphertexts.length) found.push({ path: pathKey(path), binding, ciphertexts });
        return;
      }
    }
    if (path.length >= FIELD_DEPTH || typeof v !== "object" || v === null) return;
    for (const [k, item] of Array.isArray(v) ? v.entries() : Object.entries(v)) {
      path.push(k);
      walk(item);
      path.pop();
    }
  };
  walk(value);
  return found;
}

/**
 * Decrypts every encrypted value inside `value`: envelopes (to the JSON value they hold),
 * `iv:tag:ct` strings (to their text), inside arrays and objects at any depth; an object
 * with more fields than `format` and `ciphertext` keeps its shape (its `ciphertext` string
 * becomes the plaintext text). A chat message's `encryptedContent` that opens becomes
 * `content`. A value that fails (wrong key, a flipped bit, a failed tag) is left exactly as
 * stored and counted in `errors`: never partial plaintext. Decrypted values are not walked
 * again.
 *
 * `refused` names the stored fields (paths, see `locatedFields`) whose seal tag did not
 * match: none of their untagged values opens. A `v2:` value opens only with the binding
 * `locate` gives for the path it sits at. Untagged values outside stored fields (a
 * client's own, inside its artifacts) open wherever they are.
 */
export function decryptDeep(
  value: unknown,
  key: Buffer,
  locate: SealLocator = NOWHERE,
  refused: ReadonlySet<string> = new Set(),
): { value: unknown; errors: number } {
  let errors = 0;
  const path: PathKey[] = [];
  let inRefused = 0;
  const attempt = <T>(fn: () => T, fallback: unknown): T | typeof fallback => {
    try {
      return fn();
    } catch {
      errors++;
      return fallback;
    }
  };
  const open = (v: string) => {
    if (isBoundString(v)) return decryptString(v, key, locate(path));
    if (inRefused) throw new Error("the field's seal tag does not match its place");
    return decryptString(v, key);
  };
  const openEnv = (v: { format: "svc.om.encrypted"; ciphertext: string }) => {
    if (!isBoundString(v.ciphertext) && inRefused) throw new Error("the field's seal tag does not match its place");
    return openEnvelope(v, key, isBoundString(v.ciphertext) ? locate(path) : null);
  };
  const walk = (v: unknown, depth: number): unknown => {
    if (depth > MAX_DEPTH) return v;
    const refusedHere = refused.size > 0 && depth > 0 && depth <= FIELD_DEPTH && refused.has(pathKey(path));
    if (refusedHere) inRefused++;
    try {
      return walkInner(v, depth);
    } finally {
      if (refusedHere) inRefused--;
    }
  };
  const walkInner = (v: unknown, depth: number): unknown => {
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
    if (isEnvelope(v) && Object.keys(v).length === 2) return attempt(() => openEnv(v), v);
    const out: Record<string, unknown> = {};
    for (const [k, item] of Object.entries(v)) {
      path.push(k);
      if (k === "encryptedContent" && isCiphertextString(item)) {
        const refusedHere = refused.size > 0 && refused.has(pathKey(path));
        if (refusedHere) inRefused++;
        const before = errors;
        const text = attempt(() => open(item), item);
        if (refusedHere) inRefused--;
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

/**
 * `decryptDeep` with the seal tags of the response's stored fields checked first
 * (`check`, loaded for the fields found): what the server opens with a client key.
 */
export async function openStored(
  value: unknown,
  key: Buffer,
  locate: SealLocator | undefined,
  check: (bindings: SealBinding[]) => Promise<TagCheck>,
): Promise<{ value: unknown; errors: number }> {
  const fields = locate ? locatedFields(value, locate) : [];
  const refused = new Set<string>();
  if (fields.length) {
    const passes = await check(fields.map((f) => f.binding));
    for (const field of fields) if (!passes(field.binding, field.ciphertexts)) refused.add(field.path);
  }
  return decryptDeep(value, key, locate, refused);
}
