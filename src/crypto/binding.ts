/**
 * The place of a stored sealed value: its owner, its record (kind and id) and the field it
 * is stored in. The seal tag beside a field is computed over its place (seal-tags.ts); the
 * earlier `v2:` format carried it as AES-GCM associated data. A value moved to another
 * record, field or user fails there, is left as stored and counted in
 * `X-Svc-Decrypt-Errors`, like any value that fails to open.
 */

/** The records the server seals values of. Notes are documents (one store, two views). */
export type SealKind = "document" | "chat-message" | "notebook-registry";

export interface SealBinding {
  /** The user id of the record's owner (as the server knows it: `/v1/me`'s `userId`). */
  ownerId: string;
  kind: SealKind;
  /** The document id, the chat message id, or the workspace id of a notebook registry. */
  recordId: string;
  /** The stored field: `documentPayload`, `blocksPayload`, `markdown`, `encryptedContent`, `ciphertext`. */
  field: string;
}

/** The version tag of the earlier bound format, still read: `v2:iv_hex:auth_tag_hex:ciphertext_hex`. */
export const BOUND_TAG = "v2";
const AAD_CONTEXT = "mnemo.seal.v2";

/**
 * The associated data of a `v2:` value: the UTF-8 bytes of `mnemo.seal.v2`, owner id, kind,
 * record id and field, separated by NUL (U+0000, which no id or text may hold: the edge
 * refuses it, see lib/nul-text.ts, so the parts cannot run into each other).
 *
 * @example bindingAad({ ownerId: "alice", kind: "document", recordId: "doc_1", field: "markdown" })
 * // Buffer of "mnemo.seal.v2\0alice\0document\0doc_1\0markdown"
 */
export function bindingAad(binding: SealBinding): Buffer {
  return Buffer.from(
    [AAD_CONTEXT, binding.ownerId, binding.kind, binding.recordId, binding.field].join("\u0000"),
    "utf8",
  );
}

/** A binding builder for one record: `bindingFor("alice", "document", "doc_1")("markdown")`. */
export const bindingFor =
  (ownerId: string, kind: SealKind, recordId: string) =>
  (field: string): SealBinding => ({ ownerId, kind, recordId, field });

/** A key of a path into a response: an object key or an array index. */
export type PathKey = string | number;

/**
 * The place of each stored sealed field of a response, by its path in the response
 * (`["document", "markdown"]`, `[3, "encryptedContent"]`); null where no stored field
 * sits. A route that returns stored fields says where they come from, so a value moved
 * elsewhere is checked against the place it sits, not the place it came from.
 */
export type SealLocator = (path: readonly PathKey[]) => SealBinding | null;

/** What a route's locator is made from: its response, the caller and the path parameters. */
export interface SealContext {
  response: unknown;
  userId: string;
  params: Record<string, string | undefined>;
}
export type SealMap = (context: SealContext) => SealLocator;
