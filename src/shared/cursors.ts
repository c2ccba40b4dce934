import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { badRequest } from "./app-error";

/**
 * Opaque list cursors. A cursor is the position of a page (e.g. a sequence number)
 * encrypted with AES-256-GCM under a server secret kept in the store of record (so any
 * replica reads any replica's cursors), with the owner and the list bound as associated
 * data: nobody learns the position (a global sequence counts every user's writes), and a
 * cursor made for one user or one list is refused for another.
 */
export function createCursors(secret: Buffer) {
  if (secret.length !== 32) throw new Error("the cursor secret must be 32 bytes");
  const aad = (ownerId: string, list: string) => Buffer.from(`${ownerId.length}:${ownerId}|${list}`);
  return {
    encode(ownerId: string, list: string, position: string): string {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", secret, iv);
      cipher.setAAD(aad(ownerId, list));
      const body = Buffer.concat([cipher.update(position, "utf8"), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
    },
    /** The position inside a cursor; a 400 naming `field` for anything this API did not issue to this owner for this list. */
    decode(ownerId: string, list: string, cursor: string, field = "cursor"): string {
      const bytes = Buffer.from(cursor, "base64url");
      if (bytes.length < 29 || bytes.length > 1_024) throw badRequest(`${field}: is not a cursor returned by this API`);
      try {
        const decipher = createDecipheriv("aes-256-gcm", secret, bytes.subarray(0, 12));
        decipher.setAAD(aad(ownerId, list));
        decipher.setAuthTag(bytes.subarray(12, 28));
        return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString("utf8");
      } catch {
        throw badRequest(`${field}: is not a cursor returned by this API`);
      }
    },
  };
}
export type Cursors = ReturnType<typeof createCursors>;
