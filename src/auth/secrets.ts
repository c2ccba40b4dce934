import { createHash, timingSafeEqual } from "node:crypto";
import { randomSecret } from "../lib/ids";

/** Hex SHA-256 of a secret: only this is stored, never the secret. */
export const hashSecret = (secret: string) => createHash("sha256").update(secret).digest("hex");

/** Compares a presented secret with a stored hash in constant time. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashSecret(secret), "hex");
  const stored = Buffer.from(storedHash, "hex");
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}

/** Random part of a credential: an 8-char public lookup id followed by 32 secret chars. */
export const LOOKUP_LENGTH = 8;
export const newCredentialBody = () => randomSecret(LOOKUP_LENGTH + 32);
