import { createHmac, timingSafeEqual } from "node:crypto";

/** How long a presigned upload URL stays valid. */
export const PRESIGN_TTL_MS = 15 * 60 * 1000;

/** What a presigned URL authorizes: one method on one key with one content type, until `expires` (unix seconds). */
export interface Presigned {
  method: "PUT";
  workspaceId: string;
  key: string;
  contentType: string;
  expires: number;
}

/**
 * HMAC-SHA256 presigning with a server secret kept in the store of record (so a URL
 * signed by one replica is accepted by every other). Each field is length-prefixed in
 * the signed text, so no field can be shifted into its neighbour.
 */
export function createPresigner(secret: Buffer) {
  const mac = (p: Presigned) => {
    const fields = [p.method, p.workspaceId, p.key, normalizeType(p.contentType), String(p.expires)];
    return createHmac("sha256", secret)
      .update(fields.map((f) => `${f.length}:${f}`).join("\n"))
      .digest();
  };
  return {
    sign: (p: Presigned): string => mac(p).toString("base64url"),
    /** True when `signature` was made by `sign` for exactly these fields (compared in constant time). */
    verify(p: Presigned, signature: string): boolean {
      const given = Buffer.from(signature, "base64url");
      const expected = mac(p);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}
export type Presigner = ReturnType<typeof createPresigner>;

/** `Text/Plain; charset=UTF-8` and `text/plain;charset=utf-8` are the same type. */
export function normalizeType(contentType: string): string {
  return contentType
    .split(";")
    .map((part) => part.trim().toLowerCase())
    .filter(Boolean)
    .join("; ");
}
