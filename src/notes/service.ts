import { decryptString, encryptString, ENVELOPE_FORMAT, isCiphertextString } from "../crypto/aes-gcm";
import { bindingFor, type SealBinding } from "../crypto/binding";
import type { SealTags } from "../crypto/seal-tags";
import { untaggedCiphertexts } from "../crypto/seal-tags";
import type { Store } from "../db/store";
import { notFound, payloadTooLarge } from "../shared/app-error";
import { CAMEL_NAMES, checkLimits, toBlocks, type DocumentChanges } from "../documents/changes";
import { ENCRYPTED_BLOB } from "../documents/markdown-blocks";
import { toFullDocument } from "../documents/present";
import type { DocumentRow } from "../documents/record";
import type { DocumentService } from "../documents/service";
import type { Page, PageRequest } from "../shared/pagination";
import type { ArtifactAccess, WorkspaceService } from "../workspaces/service";
import type { CreateNoteBody, LegacyNoteEntry, PatchNoteBody } from "./model";

const ENCRYPTED_FORMAT = ENVELOPE_FORMAT;

/** Where a workspace's notebook registry is sealed (crypto/binding.ts). */
export const registryBinding = (ownerId: string, workspaceId: string) =>
  bindingFor(ownerId, "notebook-registry", workspaceId)("ciphertext");

/** A sealed registry's text, or null when the key does not open it (then no notebook is found). */
function openOrNull(value: string, key: Buffer, binding: SealBinding): string | null {
  try {
    return decryptString(value, key, binding);
  } catch {
    return null;
  }
}
const MAX_REGISTRY_BYTES = 5 * 1024 * 1024;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A legacy payload's title, when it is plaintext and has one. */
function titleOf(payload: unknown): string | undefined {
  return isObject(payload) && typeof payload.title === "string" && payload.title.trim()
    ? payload.title.slice(0, 500)
    : undefined;
}

/**
 * Maps a legacy body onto document changes; `title` comes from a plaintext payload's
 * `title`, except when the server seals the payload (the title would be plaintext at rest).
 */
function fromLegacyBody(body: typeof PatchNoteBody.static, encryptionKey?: Buffer): DocumentChanges {
  const changes: DocumentChanges = {};
  if (encryptionKey) changes.encryptionKey = encryptionKey;
  if (body.documentPayload !== undefined) {
    changes.documentPayload = body.documentPayload;
    const title = encryptionKey ? undefined : titleOf(body.documentPayload);
    if (title) changes.title = title;
  }
  if (body.blocksPayload !== undefined) changes.blocksPayload = body.blocksPayload;
  if (body.markdown !== undefined) changes.markdown = body.markdown;
  if (body.indexableBlocks !== undefined) changes.indexableBlocks = toBlocks(body.indexableBlocks, "indexableBlocks");
  if (body.notebookId !== undefined) changes.notebookId = body.notebookId;
  checkLimits(changes, CAMEL_NAMES);
  return changes;
}

/**
 * How a stored payload lists: envelopes and `iv:tag:ct` strings as `format` +
 * `ciphertext`; a string holding JSON is parsed first; plaintext as `document`.
 */
function listForm(payload: unknown): Pick<LegacyNoteEntry, "format" | "ciphertext" | "document"> {
  let value = payload;
  if (typeof value === "string") {
    if (ENCRYPTED_BLOB.test(value)) return { format: ENCRYPTED_FORMAT, ciphertext: value };
    try {
      value = JSON.parse(value);
    } catch {
      return { format: "text", ciphertext: null, document: payload };
    }
  }
  if (isObject(value) && typeof value.format === "string" && typeof value.ciphertext === "string") {
    return { format: value.format, ciphertext: value.ciphertext };
  }
  return { format: "json", ciphertext: null, document: value };
}

/** A list entry: `_meta` merges the plaintext sidecar into the document's metadata. */
function toEntry(doc: DocumentRow): LegacyNoteEntry {
  return {
    id: doc.id,
    ...listForm(doc.documentPayload),
    _meta: {
      ...doc.metadata,
      indexableBlocks: doc.indexableBlocks,
      notebookId: doc.notebookId,
      updatedAt: doc.updatedAt,
    },
  };
}

/** Finds a notebook in a plaintext registry: `[{id,…}]` or `{notebooks: [{id,…}]}`. */
function findNotebook(registry: string, notebookId: string): Record<string, unknown> | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(registry);
  } catch {
    return null;
  }
  const list = Array.isArray(parsed)
    ? parsed
    : isObject(parsed) && Array.isArray(parsed.notebooks)
      ? parsed.notebooks
      : [];
  return (
    (list as unknown[]).find((item): item is Record<string, unknown> => isObject(item) && item.id === notebookId) ??
    null
  );
}

/**
 * The legacy notes view of the document store: writes go straight to the stored
 * document and never touch the derived index (see documents/service.ts).
 */
export function createNoteService(
  documents: DocumentService,
  workspaces: WorkspaceService,
  artifacts: ArtifactAccess,
  store: Store,
  sealTags: SealTags,
) {
  return {
    /** A page of notes, oldest first: at most `limit`, and fewer once they hold 8 MB of stored content. */
    async list(ownerId: string, workspaceId: string, request: PageRequest): Promise<Page<LegacyNoteEntry>> {
      const page = await documents.listFull(ownerId, workspaceId, request);
      return { ...page, items: page.items.map(toEntry) };
    },

    /** Creates a note, or rewrites the note `documentId` names when it exists in this workspace. */
    async save(
      ownerId: string,
      workspaceId: string,
      body: typeof CreateNoteBody.static,
      encryptionKey?: Buffer,
    ): Promise<{ id: string; created: boolean }> {
      const changes = fromLegacyBody(body, encryptionKey);
      const { document, created } = await documents.create(ownerId, workspaceId, body.documentId, changes, "legacy", {
        replace: true,
      });
      return { id: document.id, created };
    },

    async get(ownerId: string, workspaceId: string, noteId: string) {
      const doc = await documents.get(ownerId, workspaceId, noteId);
      const full = toFullDocument(doc);
      return { document: full.document_payload, blocks: full.blocks_payload, markdown: full.markdown };
    },

    async patch(
      ownerId: string,
      workspaceId: string,
      noteId: string,
      body: typeof PatchNoteBody.static,
      encryptionKey?: Buffer,
    ): Promise<string> {
      return (await documents.update(ownerId, workspaceId, noteId, fromLegacyBody(body, encryptionKey), "legacy")).id;
    },

    async remove(ownerId: string, workspaceId: string, noteId: string): Promise<void> {
      await documents.remove(ownerId, workspaceId, noteId);
    },

    async notebookRegistry(ownerId: string, workspaceId: string): Promise<{ ciphertext: string | null }> {
      await workspaces.requireOwned(ownerId, workspaceId);
      const stored = await artifacts.get(store.db, ownerId, workspaceId, "notebooks");
      return { ciphertext: typeof stored === "string" ? stored : null };
    },

    /**
     * With `encryptionKey` (reverse-proxy mode) a registry sent in plaintext is stored as
     * `iv:tag:ct`; a sealed registry is tagged with its workspace (crypto/seal-tags.ts).
     */
    async saveNotebookRegistry(
      ownerId: string,
      workspaceId: string,
      ciphertext: string,
      encryptionKey?: Buffer,
    ): Promise<void> {
      await workspaces.requireOwned(ownerId, workspaceId);
      const size = Buffer.byteLength(ciphertext, "utf8");
      if (size > MAX_REGISTRY_BYTES)
        throw payloadTooLarge(`ciphertext: is ${size} bytes; the limit is ${MAX_REGISTRY_BYTES} bytes (5 MB)`);
      const stored =
        encryptionKey && !isCiphertextString(ciphertext) ? encryptString(ciphertext, encryptionKey) : ciphertext;
      await store.transaction(async (tx) => {
        await artifacts.put(tx, ownerId, workspaceId, "notebooks", stored, new Date().toISOString());
        await sealTags.stamp(tx, registryBinding(ownerId, workspaceId), stored);
      });
    },

    /** A notebook's structured record, when the registry is plaintext JSON that lists it. */
    async notebook(
      ownerId: string,
      workspaceId: string,
      notebookId: string,
      key: Buffer | null = null,
    ): Promise<Record<string, unknown>> {
      const { ciphertext } = await this.notebookRegistry(ownerId, workspaceId);
      let registry = ciphertext;
      if (ciphertext !== null && key && isCiphertextString(ciphertext)) {
        // Opened only where its seal tag says it was stored: a registry moved from another workspace is not.
        const binding = registryBinding(ownerId, workspaceId);
        const passes = await sealTags.checker(store.db, [binding]);
        registry = passes(binding, untaggedCiphertexts(ciphertext)) ? openOrNull(ciphertext, key, binding) : null;
      }
      const notebook = registry === null ? null : findNotebook(registry, notebookId);
      if (!notebook) throw notFound(`notebook '${notebookId}' not found`);
      return notebook;
    },
  };
}
export type NoteService = ReturnType<typeof createNoteService>;
