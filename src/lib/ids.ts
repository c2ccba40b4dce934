import { randomBytes } from "node:crypto";

// Crockford base32: sortable as plain strings, no ambiguous letters.
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
let lastTime = 0;
let lastRandom = new Uint8Array(10);

/**
 * A ULID-style id: 48-bit millisecond time + 80 random bits, 26 characters.
 * Ids made in the same millisecond increment the random part, so ids sort in
 * creation order within this process.
 */
export function sortableId(now = Date.now()): string {
  if (now <= lastTime) {
    now = lastTime;
    for (let i = lastRandom.length - 1; i >= 0; i--) {
      if (lastRandom[i] < 255) {
        lastRandom[i]++;
        break;
      }
      lastRandom[i] = 0;
    }
  } else {
    lastTime = now;
    lastRandom = new Uint8Array(randomBytes(10));
  }
  let time = "";
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  return time + encodeBits(lastRandom);
}

function encodeBits(bytes: Uint8Array): string {
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(buffer >> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

/** A prefixed id such as `mem_01J…` or `ws_01J…`. */
export const newId = (prefix: string) => `${prefix}_${sortableId()}`;

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A random base62 string for secrets (no `_`, so prefixes stay unambiguous). */
export function randomSecret(length: number): string {
  const bytes = randomBytes(length * 2);
  let out = "";
  for (let i = 0; i < bytes.length && out.length < length; i++) {
    // 248 = 4 * 62: rejecting the rest keeps every character equally likely.
    if (bytes[i] < 248) out += BASE62[bytes[i] % 62];
  }
  return out.length === length ? out : out + randomSecret(length - out.length);
}
