import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { BOUND_TAG, bindingAad, type SealBinding } from "./binding";

/** The `format` of an encrypted envelope (spec §2). */
export const ENVELOPE_FORMAT = "svc.om.encrypted";

/** 96-bit IV (the GCM standard size) and 128-bit tag. */
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * `iv_hex:auth_tag_hex:ciphertext_hex` with a 12-byte IV and a 16-byte tag, untagged
 * (version 1: no associated data, the spec's form) or tagged `v2:` (bound to its place,
 * see binding.ts).
 */
const CIPHERTEXT_STRING = new RegExp(`^(?:${BOUND_TAG}:)?[0-9a-fA-F]{24}:[0-9a-fA-F]{32}:(?:[0-9a-fA-F]{2})*$`);
const UNTAGGED = /^[0-9a-f]{24}:[0-9a-f]{32}:(?:[0-9a-f]{2})*$/i;
const TAG_PREFIX = `${BOUND_TAG}:`;

export interface Envelope {
  format: typeof ENVELOPE_FORMAT;
  ciphertext: string;
}

/** AES-256-GCM over bytes with a fresh random IV; `aad` is authenticated, not encrypted. */
export function sealBytes(plaintext: Uint8Array, key: Buffer, aad?: Uint8Array): { iv: Buffer; tag: Buffer; ciphertext: Buffer } {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
  if (aad) cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv, tag: cipher.getAuthTag(), ciphertext };
}

/** Opens what `sealBytes` made; throws when the key, the AAD or any bit is wrong. */
export function openBytes(parts: { iv: Buffer; tag: Buffer; ciphertext: Buffer }, key: Buffer, aad?: Uint8Array): Buffer {
  const decipher = createDecipheriv("aes-256-gcm", key, parts.iv, { authTagLength: TAG_BYTES });
  if (aad) decipher.setAAD(aad);
  decipher.setAuthTag(parts.tag);
  return Buffer.concat([decipher.update(parts.ciphertext), decipher.final()]);
}

/** The spec's string form of a sealed value. */
export function formatSealed(parts: { iv: Buffer; tag: Buffer; ciphertext: Buffer }): string {
  return `${parts.iv.toString("hex")}:${parts.tag.toString("hex")}:${parts.ciphertext.toString("hex")}`;
}

/** Splits an untagged `iv:tag:ct`; throws on anything else. */
export function parseSealed(value: string): { iv: Buffer; tag: Buffer; ciphertext: Buffer } {
  if (!UNTAGGED.test(value)) throw new Error("not an iv:tag:ciphertext string");
  const [iv, tag, ciphertext] = value.split(":");
  return { iv: Buffer.from(iv, "hex"), tag: Buffer.from(tag, "hex"), ciphertext: Buffer.from(ciphertext, "hex") };
}

/** Whether a ciphertext string is bound to its place (`v2:…`). */
export const isBoundString = (value: string) => value.startsWith(TAG_PREFIX);

/**
 * Encrypts UTF-8 text to `iv_hex:auth_tag_hex:ciphertext_hex`; with a `binding`, to
 * `v2:iv_hex:auth_tag_hex:ciphertext_hex` with the binding as associated data (what the
 * server seals is always bound).
 *
 * @example encryptString("hello", key) // "9f…(24):1c…(32):a4…"
 * @example encryptString("hello", key, { ownerId: "alice", kind: "document", recordId: "doc_1", field: "markdown" }) // "v2:9f…:1c…:a4…"
 */
export function encryptString(plaintext: string, key: Buffer, binding?: SealBinding): string {
  const bytes = Buffer.from(plaintext, "utf8");
  return binding ? TAG_PREFIX + formatSealed(sealBytes(bytes, key, bindingAad(binding))) : formatSealed(sealBytes(bytes, key));
}

/**
 * Decrypts a ciphertext string to UTF-8 text; throws when authentication fails (wrong
 * key, tampering). An untagged value opens without associated data wherever it is (the
 * format of values sealed before binding, and of clients' own); a `v2:` value opens only
 * with the binding of the place it was sealed for, so without one, or moved, it throws.
 */
export function decryptString(value: string, key: Buffer, binding?: SealBinding | null): string {
  if (!isBoundString(value)) return openBytes(parseSealed(value), key).toString("utf8");
  if (!binding) throw new Error("a bound value opens only in the record and field it was sealed for");
  return openBytes(parseSealed(value.slice(TAG_PREFIX.length)), key, bindingAad(binding)).toString("utf8");
}

/** Whether a value has the shape of an `iv:tag:ct` string (12-byte IV, 16-byte tag, hex). */
export function isCiphertextString(v: unknown): v is string {
  return typeof v === "string" && CIPHERTEXT_STRING.test(v);
}

/** An encrypted envelope of a JSON-serialised value; bound (`v2:` ciphertext) with a `binding`. */
export function sealJson(value: unknown, key: Buffer, binding?: SealBinding): Envelope {
  return { format: ENVELOPE_FORMAT, ciphertext: encryptString(JSON.stringify(value), key, binding) };
}

/** Whether a value is an encrypted envelope `{format: 'svc.om.encrypted', ciphertext}`. */
export function isEnvelope(v: unknown): v is Envelope {
  return (
    typeof v === "object" && v !== null && !Array.isArray(v) &&
    (v as Record<string, unknown>).format === ENVELOPE_FORMAT && typeof (v as Record<string, unknown>).ciphertext === "string"
  );
}

/** The value an envelope holds; throws when authentication fails (see `decryptString`). Non-JSON plaintext comes back as text. */
export function openEnvelope(envelope: Envelope, key: Buffer, binding?: SealBinding | null): unknown {
  const text = decryptString(envelope.ciphertext, key, binding);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
