import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { BOUND_TAG, bindingAad, type SealBinding } from "./binding";

/** The `format` of an encrypted envelope (docs/encryption.md#cryptography). */
export const ENVELOPE_FORMAT = "svc.om.encrypted";

/** 96-bit IV (the GCM standard size) and 128-bit tag. */
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * `iv_hex:auth_tag_hex:ciphertext_hex` with a 12-byte IV and a 16-byte tag: the contract's
 * form (no associated data), or, read only, `v2:` + that form (AES-GCM with its place as
 * associated data: what an earlier version stored, see binding.ts).
 */
const CIPHERTEXT_STRING = new RegExp(`^(?:${BOUND_TAG}:)?[0-9a-fA-F]{24}:[0-9a-fA-F]{32}:(?:[0-9a-fA-F]{2})*$`);
const UNTAGGED = /^[0-9a-f]{24}:[0-9a-f]{32}:(?:[0-9a-f]{2})*$/i;
const TAG_PREFIX = `${BOUND_TAG}:`;

export interface Envelope {
  format: typeof ENVELOPE_FORMAT;
  ciphertext: string;
}

/** AES-256-GCM over bytes with a fresh random IV; `aad` is authenticated, not encrypted. */
export function sealBytes(
  plaintext: Uint8Array,
  key: Buffer,
  aad?: Uint8Array,
): { iv: Buffer; tag: Buffer; ciphertext: Buffer } {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
  if (aad) cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv, tag: cipher.getAuthTag(), ciphertext };
}

/** Opens what `sealBytes` made; throws when the key, the AAD or any bit is wrong. */
export function openBytes(
  parts: { iv: Buffer; tag: Buffer; ciphertext: Buffer },
  key: Buffer,
  aad?: Uint8Array,
): Buffer {
  const decipher = createDecipheriv("aes-256-gcm", key, parts.iv, { authTagLength: TAG_BYTES });
  if (aad) decipher.setAAD(aad);
  decipher.setAuthTag(parts.tag);
  return Buffer.concat([decipher.update(parts.ciphertext), decipher.final()]);
}

/** The string form of a sealed value (docs/encryption.md#cryptography). */
export function formatSealed(parts: { iv: Buffer; tag: Buffer; ciphertext: Buffer }): string {
  return `${parts.iv.toString("hex")}:${parts.tag.toString("hex")}:${parts.ciphertext.toString("hex")}`;
}

/** Splits an untagged `iv:tag:ct`; throws on anything else. */
export function parseSealed(value: string): { iv: Buffer; tag: Buffer; ciphertext: Buffer } {
  if (!UNTAGGED.test(value)) throw new Error("not an iv:tag:ciphertext string");
  const [iv, tag, ciphertext] = value.split(":");
  return { iv: Buffer.from(iv, "hex"), tag: Buffer.from(tag, "hex"), ciphertext: Buffer.from(ciphertext, "hex") };
}

/** Whether a ciphertext string is of the earlier bound form (`v2:…`). */
export const isBoundString = (value: string) => value.startsWith(TAG_PREFIX);

/**
 * Encrypts UTF-8 text to `iv_hex:auth_tag_hex:ciphertext_hex` (AES-256-GCM, no associated
 * data): what the holder of `key` opens with the key alone. What keeps a stored value in
 * its place is the server's seal tag beside it (seal-tags.ts), not the ciphertext.
 *
 * @example encryptString("hello", key) // "9f…(24):1c…(32):a4…"
 */
export function encryptString(plaintext: string, key: Buffer): string {
  return formatSealed(sealBytes(Buffer.from(plaintext, "utf8"), key));
}

/**
 * Decrypts a ciphertext string to UTF-8 text; throws when authentication fails (wrong
 * key, tampering). An untagged value opens without associated data (whether it may be
 * opened where it sits is the seal tag's question, asked before); a `v2:` value of the
 * earlier format opens only with the binding of the place it was sealed for.
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

/** An encrypted envelope of a JSON-serialised value. */
export function sealJson(value: unknown, key: Buffer): Envelope {
  return { format: ENVELOPE_FORMAT, ciphertext: encryptString(JSON.stringify(value), key) };
}

/** Whether a value is an encrypted envelope `{format: 'svc.om.encrypted', ciphertext}`. */
export function isEnvelope(v: unknown): v is Envelope {
  return (
    typeof v === "object" &&
    v !== null &&
    !Array.isArray(v) &&
    (v as Record<string, unknown>).format === ENVELOPE_FORMAT &&
    typeof (v as Record<string, unknown>).ciphertext === "string"
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
