import type { EncryptionOptions } from "../crypto/plugin";
import { badRequest } from "../shared/app-error";

const header = (request: Request) => request.headers.get("x-client-key");

/**
 * Which client key file bytes are sealed with or opened by (reverse-proxy mode,
 * MNEMO_PROXY_ENCRYPTION): `X-Client-Key`, else the user's escrowed key, as for every
 * other payload (`src/crypto/client-keys.ts`). A malformed header is a 400 naming it.
 */
export function fileSealKeys({ keys, proxyMode }: EncryptionOptions) {
  async function required(userId: string, request: Request, why: string): Promise<Buffer> {
    const key = await keys.resolve(userId, header(request));
    if (!key) throw badRequest(`X-Client-Key: ${why}; send X-Client-Key or escrow a client key`);
    return key;
  }
  return {
    /** The key new bytes are sealed with: in reverse-proxy mode the caller's (none is a 400); otherwise none, the bytes are stored as sent. */
    async forWrite(userId: string, request: Request): Promise<Buffer | undefined> {
      return proxyMode ? required(userId, request, "this server encrypts every write (reverse-proxy mode)") : undefined;
    },
    /** The key that opens bytes sealed already (an upload session's parts), whatever the mode now; none is a 400. */
    forSealed: (userId: string, request: Request): Promise<Buffer> =>
      required(userId, request, "this upload's parts are sealed with your client key"),
    /** With `X-Proxy-Decrypt: true`, the key to open a sealed download with; null sends it as stored. */
    async forRead(userId: string, request: Request): Promise<Buffer | null> {
      if (request.headers.get("x-proxy-decrypt")?.trim().toLowerCase() !== "true") return null;
      return keys.resolve(userId, header(request));
    },
  };
}
export type FileSealKeys = ReturnType<typeof fileSealKeys>;
