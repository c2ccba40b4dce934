import { createPublicKey, diffieHellman, generateKeyPairSync, hkdfSync, type KeyObject } from "node:crypto";
import { badRequest } from "../shared/app-error";
import { sealBytes } from "./aes-gcm";

/** HKDF `info` of a wrapped key; the salt is empty. */
export const WRAP_INFO = "mnemo-wrapped-key-v1";
export const WRAP_ALG = "ECDH-ES+P-256+HKDF-SHA256+A256GCM";

/** DER prefix that turns a raw uncompressed P-256 point (65 bytes) into an SPKI. */
const P256_SPKI_PREFIX = Buffer.from("3059301306072a8648ce3d020106082a8648ce3d030107034200", "hex");

const FIELD = "client_temp_public_key";

/**
 * Reads the caller's temporary P-256 public key: a JWK (JSON text or object), base64 SPKI
 * (WebCrypto `exportKey('spki')`), or base64 raw uncompressed point (`exportKey('raw')`).
 */
export function parseTempPublicKey(value: unknown): KeyObject {
  let key: KeyObject;
  try {
    if (typeof value === "object" && value !== null) key = createPublicKey({ key: value as never, format: "jwk" });
    else if (typeof value === "string" && value.trim().startsWith("{"))
      key = createPublicKey({ key: JSON.parse(value), format: "jwk" });
    else if (typeof value === "string") {
      const der = Buffer.from(value.trim().replace(/-/g, "+").replace(/_/g, "/"), "base64");
      const spki = der.length === 65 && der[0] === 0x04 ? Buffer.concat([P256_SPKI_PREFIX, der]) : der;
      key = createPublicKey({ key: spki, format: "der", type: "spki" });
    } else throw new Error("not a key");
  } catch {
    throw badRequest(`${FIELD}: must be a P-256 public key as a JWK or base64 SPKI (or base64 raw point)`);
  }
  if (key.asymmetricKeyType !== "ec" || key.asymmetricKeyDetails?.namedCurve !== "prime256v1") {
    throw badRequest(`${FIELD}: must be an elliptic-curve key on P-256`);
  }
  return key;
}

/**
 * Wraps a client key for the holder of `recipient`'s private key: an ephemeral P-256
 * key pair, ECDH with the recipient, HKDF-SHA256 (empty salt, info `mnemo-wrapped-key-v1`)
 * to a 256-bit AES-GCM key, which seals the 32 key bytes under a random 96-bit IV.
 * The result is JSON text `{v, alg, epk, iv, ct}`: `epk` the ephemeral public key as
 * base64 SPKI, `iv` base64, `ct` base64 of ciphertext followed by the 16-byte tag (the
 * layout WebCrypto's AES-GCM decrypt expects).
 */
export function wrapClientKey(clientKey: Buffer, recipient: KeyObject): string {
  const ephemeral = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const shared = diffieHellman({ privateKey: ephemeral.privateKey, publicKey: recipient });
  const aesKey = Buffer.from(hkdfSync("sha256", shared, Buffer.alloc(0), Buffer.from(WRAP_INFO), 32));
  const { iv, tag, ciphertext } = sealBytes(clientKey, aesKey);
  return JSON.stringify({
    v: 1,
    alg: WRAP_ALG,
    epk: (ephemeral.publicKey.export({ format: "der", type: "spki" }) as Buffer).toString("base64"),
    iv: iv.toString("base64"),
    ct: Buffer.concat([ciphertext, tag]).toString("base64"),
  });
}
