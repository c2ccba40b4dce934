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

/**
 * The key of the exact-duplicate rule: SHA-256 (hex) of the normalised text, or null for
 * content stored encrypted by the client (ciphertext cannot be normalised: such memories
 * are exempt). The store holds one memory per (owner, workspace, key).
 */
export function memoryContentKey(content: string): string | null {
  if (looksEncrypted(content)) return null;
  return createHash("sha256").update(normaliseMemoryText(content)).digest("hex");
}
