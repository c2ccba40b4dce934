import type { Logger } from "../lib/log";
import { parseClientKey } from "./client-key";
import type { EscrowService } from "./escrow";

/**
 * Resolves the client key of a request (docs/encryption.md#the-client-key): the `X-Client-Key` header when
 * sent (a malformed one is a 400 naming the header), else the user's escrowed key, else
 * null. An escrow blob that does not open is logged (never its content) and treated as
 * no key: the caller then gets stored values unchanged.
 */
export function createClientKeys(escrow: EscrowService, log: Logger) {
  return {
    async resolve(userId: string, headerValue?: string | null): Promise<Buffer | null> {
      if (headerValue !== undefined && headerValue !== null && headerValue !== "")
        return parseClientKey(headerValue, "X-Client-Key");
      try {
        return await escrow.get(userId);
      } catch (error) {
        log.warn("escrowed client key does not open; treating the request as keyless", {
          userId,
          reason: (error as Error).message,
        });
        return null;
      }
    },
  };
}
export type ClientKeys = ReturnType<typeof createClientKeys>;
