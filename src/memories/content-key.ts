import { createHash } from "node:crypto";
import { looksEncrypted } from "../crypto/stored-text";

/**
 * A memory's text as the exact-duplicate rule compares it: Unicode NFKC, trimmed,
 * every run of whitespace one space, case-folded (`toLowerCase` after NFKC, then NFKC
 * again so folding cannot leave a non-normal form).
 */
export function normaliseMemoryText(content: string): string {
  return content.normalize("NFKC").trim().replace(/\s+/gu, " ").toLowerCase().normalize("NFKC");
}

/** Hex digits of the key kept: 128 bits tell texts apart as surely as 256, in half the bytes of the row and its index. */
export const CONTENT_KEY_HEX = 32;

/**
 * The key of the exact-duplicate rule: SHA-256 of the normalised text, its first
 * `CONTENT_KEY_HEX` hex digits, or null for content stored encrypted by the client
 * (ciphertext cannot be normalised: such memories are exempt). The store holds one
 * memory per (owner, workspace, key).
 */
export function memoryContentKey(content: string): string | null {
  if (looksEncrypted(content)) return null;
  return createHash("sha256").update(normaliseMemoryText(content)).digest("hex").slice(0, CONTENT_KEY_HEX);
}
