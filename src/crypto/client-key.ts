import { randomBytes } from "node:crypto";
import { badRequest } from "../shared/app-error";

/** Bytes of a client key (and of the server master key): AES-256. */
export const KEY_BYTES = 32;

const HEX_KEY = /^[0-9a-fA-F]{64}$/;
const BASE64_KEY = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * Decodes a 32-byte key given as 64 hex characters or base64/base64url (padding
 * optional); null when the text is neither. The value itself never appears in a message.
 */
export function decodeKey(value: string): Buffer | null {
  const text = value.trim();
  if (HEX_KEY.test(text)) return Buffer.from(text, "hex");
  if (!BASE64_KEY.test(text)) return null;
  const bytes = Buffer.from(text.replace(/-/g, "+").replace(/_/g, "/"), "base64");
  return bytes.length === KEY_BYTES ? bytes : null;
}

/**
 * A client key from a header, query or body value: 32 bytes from 64 hex characters or
 * base64/base64url. Anything else is a 400 naming `field` (never echoing the value).
 *
 * @example parseClientKey(request.headers.get("x-client-key")!, "X-Client-Key")
 */
export function parseClientKey(value: string, field: string): Buffer {
  const key = typeof value === "string" ? decodeKey(value) : null;
  if (!key) throw badRequest(`${field}: must be a 32-byte key as 64 hex characters or base64/base64url`);
  return key;
}

/** A fresh random client key. */
export const generateClientKey = (): Buffer => randomBytes(KEY_BYTES);
