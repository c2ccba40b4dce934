/**
 * What a value the server seals is bound to: its owner, its record
 * (kind and id) and the field it is stored in, as AES-GCM associated data. A bound value
 * moved to another record, field or user no longer authenticates there, so it is left as
 * stored and counted in `X-Svc-Decrypt-Errors`, like any value that fails to open.
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

/** The version tag a bound value starts with: `v2:iv_hex:auth_tag_hex:ciphertext_hex`. Untagged values are version 1 (no associated data). */
export const BOUND_TAG = "v2";
const AAD_CONTEXT = "mnemo.seal.v2";

/**
 * The associated data of a binding: the UTF-8 bytes of `mnemo.seal.v2`, owner id, kind,
 * record id and field, separated by NUL (U+0000, which no id or text may hold: the edge
 * refuses it, see lib/nul-text.ts, so the parts cannot run into each other).
 *
 * @example bindingAad({ ownerId: "alice", kind: "document", recordId: "doc_1", field: "markdown" })
 * // Buffer of "mnemo.seal.v2\0alice\0document\0doc_1\0markdown"
 */
export function bindingAad(binding: SealBinding): Buffer {
  return Buffer.from([AAD_CONTEXT, binding.ownerId, binding.kind, binding.recordId, binding.field].join("\u0000"), "utf8");
}

/** A binding builder for one record: `bindingFor("alice", "document", "doc_1")("markdown")`. */
export const bindingFor = (ownerId: string, kind: SealKind, recordId: string) => (field: string): SealBinding => ({ ownerId, kind, recordId, field });

/** A key of a path into a response: an object key or an array index. */
export type PathKey = string | number;

/**
 * Where each server-sealed value of a response was sealed, by its path in the response
 * (`["document", "markdown"]`, `[3, "encryptedContent"]`); null where nothing the server
 * sealed belongs. A route that returns sealed values says where they come from, so a
 * value pasted elsewhere is opened against the place it sits, not the place it came from.
 */
export type SealLocator = (path: readonly PathKey[]) => SealBinding | null;

/** What a route's locator is made from: its response, the caller and the path parameters. */
export interface SealContext {
  response: unknown;
  userId: string;
  params: Record<string, string | undefined>;
}
export type SealMap = (context: SealContext) => SealLocator;
