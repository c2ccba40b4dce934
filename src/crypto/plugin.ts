import { Elysia } from "elysia";
import { badRequest } from "../shared/app-error";
import { parseClientKey } from "./client-key";
import type { ClientKeys } from "./client-keys";
import type { SealBinding, SealLocator, SealMap } from "./binding";
import { openStored } from "./decrypt-deep";
import type { TagCheck } from "./seal-tags";

/** Response header counting values that failed authentication (left as stored). */
export const DECRYPT_ERRORS_HEADER = "X-Svc-Decrypt-Errors";

export interface EncryptionOptions {
  keys: ClientKeys;
  /** MNEMO_PROXY_ENCRYPTION: encrypt every payload write with the caller's resolved key. */
  proxyMode: boolean;
  /** The seal tags of stored fields (seal-tags.ts), checked before any of their values is opened. */
  tagCheck: (bindings: SealBinding[]) => Promise<TagCheck>;
}

const wantsDecrypt = (request: Request) => request.headers.get("x-proxy-decrypt")?.trim().toLowerCase() === "true";

/**
 * The `decrypt: true` route option of the PKMS routes (docs/encryption.md#reading).
 *
 * Reading: with `X-Proxy-Decrypt: true` the response is decrypted with the caller's key
 * (`X-Client-Key`, else the escrowed one; none: unchanged). It runs in `mapResponse`, after
 * the route's response schema has checked the stored form: an after-handle hook would
 * have its decrypted output validated (and refused) against the stored form. A route
 * whose response holds values the server sealed passes a `SealMap` instead of `true`:
 * where each of them was sealed (binding.ts); elsewhere only unbound values open.
 *
 * Writing: the route receives `writeKey(userId, bodyKey, field)`, the key a write must be
 * sealed with: the body's `client_key`/`clientKey`, or in reverse-proxy mode the caller's
 * resolved key (none there is a 400: that server promises ciphertext at rest). And
 * `openSealed(value, key, locate)`: a response's values opened with a key after the seal
 * tags of its stored fields were checked (a value moved from its place stays sealed).
 */
export function decryptPlugin({ keys, proxyMode, tagCheck }: EncryptionOptions) {
  // Unnamed on purpose: a named plugin is de-duplicated by name and seed, and two apps in one
  // process (tests, replicas) must each keep their own key resolver.
  return new Elysia().macro({
    decrypt: (option: boolean | SealMap) => ({
      resolve({ request }: { request: Request }) {
        // A malformed X-Client-Key is refused before the handler runs (nothing is written).
        const header = request.headers.get("x-client-key");
        if (option && header) parseClientKey(header, "X-Client-Key");
        return {
          openSealed: (value: unknown, key: Buffer, locate: SealLocator) => openStored(value, key, locate, tagCheck),
          async writeKey(
            userId: string,
            bodyKey: string | undefined,
            field = "client_key",
          ): Promise<Buffer | undefined> {
            if (bodyKey !== undefined) return parseClientKey(bodyKey, field);
            if (!proxyMode) return undefined;
            const key = await keys.resolve(userId, request.headers.get("x-client-key"));
            if (!key)
              throw badRequest(
                "X-Client-Key: this server encrypts every write (reverse-proxy mode); send X-Client-Key or escrow a client key",
              );
            return key;
          },
        };
      },
      async mapResponse(ctx: {
        request: Request;
        set: { headers: Record<string, unknown> };
        responseValue?: unknown;
        principal?: { userId: string };
        params?: Record<string, string>;
      }) {
        if (!option || !wantsDecrypt(ctx.request) || !ctx.principal) return;
        const value = ctx.responseValue;
        if (typeof value !== "object" || value === null || value instanceof Response) return;
        // The header was checked before the handler ran; a failure here answers unchanged rather than 500.
        const key = await keys.resolve(ctx.principal.userId, ctx.request.headers.get("x-client-key")).catch(() => null);
        if (!key) return;
        const locate =
          typeof option === "function"
            ? option({ response: value, userId: ctx.principal.userId, params: ctx.params ?? {} })
            : undefined;
        const result = await openStored(value, key, locate, tagCheck);
        // The count describes the response as sent: values an earlier `?clientKey=` could not open may open now.
        if (result.errors > 0) ctx.set.headers[DECRYPT_ERRORS_HEADER.toLowerCase()] = String(result.errors);
        else delete ctx.set.headers[DECRYPT_ERRORS_HEADER.toLowerCase()];
        // Elysia's types want a Response here, but any value returned replaces the response
        // and is serialised with the status and headers already set (compose.ts, mapResponse).
        return result.value as Response;
      },
    }),
  });
}
