import { parseClientKey } from "../crypto/client-key";
import { sealFields } from "../crypto/seal";
import { badRequest, payloadTooLarge } from "../shared/app-error";
import { oneOf } from "../shared/aliases";
import { LIMITS, type CreateDocumentBody, type IndexableBlockInput, type PatchDocumentBody } from "./model";
import type { IndexedBlock } from "./repository";

/** What a create or patch asks to change, aliases resolved; absent fields stay as they are. */
export interface DocumentChanges {
  title?: string;
  documentType?: string;
  rootBlockId?: string;
  notebookId?: string | null;
  documentPayload?: unknown;
  blocksPayload?: unknown;
  markdown?: string;
  metadata?: Record<string, unknown>;
  metadataPatch?: Record<string, unknown>;
  indexableBlocks?: IndexedBlock[];
  /**
   * Seal `documentPayload`, `blocksPayload` and `markdown` with this client key before
   * storing (docs/encryption.md#what-is-sealed-on-write); limits are checked on the plaintext first.
   */
  encryptionKey?: Buffer;
}

/**
 * The changes as stored: payloads sealed when a key came with them, in the contract's
 * `iv:tag:ct` form (the service tags each field where it stores it); the key itself dropped.
 */
export function sealChanges(changes: DocumentChanges): DocumentChanges {
  const { encryptionKey, ...rest } = changes;
  return encryptionKey ? sealFields(rest, encryptionKey) : rest;
}

/**
 * Resolves every snake_case/camelCase pair of a unified create or patch body; a pair
 * sent with two different values is a 400 naming both spellings.
 */
export function fromUnifiedBody(body: CreateDocumentBody | PatchDocumentBody): DocumentChanges {
  const patch = body as PatchDocumentBody;
  if (body.title !== undefined && !body.title.trim()) throw badRequest("title: must not be blank");
  const blocks = oneOf<IndexableBlockInput[]>(body, ["indexable_blocks", "indexableBlocks"]);
  // A caller that sends a key asks for encryption at rest: the service seals the payloads.
  const clientKey = oneOf<string>(body, ["client_key", "clientKey"]);
  return dropUndefined({
    encryptionKey:
      clientKey === undefined
        ? undefined
        : parseClientKey(clientKey, body.client_key !== undefined ? "client_key" : "clientKey"),
    title: body.title,
    documentType: oneOf<string>(body, ["document_type", "documentType"]),
    rootBlockId: oneOf<string>(body, ["root_block_id", "rootBlockId"]),
    notebookId: oneOf<string | null>(body, ["notebook_id", "notebookId"]),
    documentPayload: oneOf(body, ["document_payload", "documentPayload"]),
    blocksPayload: oneOf(body, ["blocks_payload", "blocksPayload"]),
    markdown: body.markdown,
    metadata: oneOf<Record<string, unknown>>(body, ["metadata", "_meta"]),
    metadataPatch: patch.metadata_patch,
    indexableBlocks: toBlocks(blocks, body.indexable_blocks ? "indexable_blocks" : "indexableBlocks"),
  });
}

/**
 * On the workspace-scoped routes the path's workspace id wins (spec), and a body's
 * `workspace_id` is ignored; but its two spellings, when both sent, must still agree.
 */
export function checkBodyWorkspace(source: { workspace_id?: string; workspaceId?: string }): void {
  oneOf<string>(source, ["workspace_id", "workspaceId"]);
}

/** The workspace id of a body or query on the non-workspace routes, where it is required. */
export function requireWorkspaceId(source: { workspace_id?: string; workspaceId?: string }): string {
  const id = oneOf<string>(source, ["workspace_id", "workspaceId"]);
  if (!id) throw badRequest("workspace_id: is required (or workspaceId)");
  return id;
}

/** Checks indexable blocks and fills in the default type; duplicate ids are refused. */
export function toBlocks(blocks: IndexableBlockInput[] | undefined, field: string): IndexedBlock[] | undefined {
  if (!blocks) return undefined;
  if (blocks.length > LIMITS.blocks)
    throw payloadTooLarge(`${field}: has ${blocks.length} blocks; the limit is ${LIMITS.blocks}`);
  const seen = new Set<string>();
  return blocks.map((block, i) => {
    if (seen.has(block.id)) throw badRequest(`${field}.${i}.id: duplicate block id '${block.id}'`);
    seen.add(block.id);
    return { ...block, type: block.type ?? "text" };
  });
}

const bytes = (value: unknown) => Buffer.byteLength(typeof value === "string" ? value : JSON.stringify(value), "utf8");
const MB = (n: number) => `${n} bytes (${n / 1024 / 1024} MB)`;

/** How a limit message names the fields: the unified routes use snake_case, the legacy routes camelCase. */
export const SNAKE_NAMES = {
  documentPayload: "document_payload",
  markdown: "markdown",
  blocksPayload: "blocks_payload",
};
export const CAMEL_NAMES = { documentPayload: "documentPayload", markdown: "markdown", blocksPayload: "blocksPayload" };

/** The size limits (413 naming the field; docs/api.md#requests-and-limits); indexable block counts are checked by `toBlocks`. */
export function checkLimits(changes: DocumentChanges, names = SNAKE_NAMES): void {
  if (changes.documentPayload !== undefined) {
    const size = bytes(changes.documentPayload);
    if (size > LIMITS.documentPayloadBytes)
      throw payloadTooLarge(
        `${names.documentPayload}: is ${size} bytes; the limit is ${MB(LIMITS.documentPayloadBytes)}`,
      );
  }
  if (changes.markdown !== undefined) {
    const size = bytes(changes.markdown);
    if (size > LIMITS.markdownBytes)
      throw payloadTooLarge(`${names.markdown}: is ${size} bytes; the limit is ${MB(LIMITS.markdownBytes)}`);
  }
  if (Array.isArray(changes.blocksPayload) && changes.blocksPayload.length > LIMITS.blocks) {
    throw payloadTooLarge(
      `${names.blocksPayload}: has ${changes.blocksPayload.length} blocks; the limit is ${LIMITS.blocks}`,
    );
  }
}

/** Applies `metadata` (replace) then `metadataPatch` (merge; null removes the key). */
export function nextMetadata(current: Record<string, unknown>, changes: DocumentChanges): Record<string, unknown> {
  const next = { ...(changes.metadata ?? current) };
  for (const [key, value] of Object.entries(changes.metadataPatch ?? {})) {
    if (value === null) delete next[key];
    else next[key] = value;
  }
  const size = bytes(next);
  if (size > LIMITS.metadataBytes)
    throw payloadTooLarge(`metadata: is ${size} bytes; the limit is ${LIMITS.metadataBytes} bytes`);
  return next;
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
