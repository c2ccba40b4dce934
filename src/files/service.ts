import { BlobTooLarge, type BlobStore, type StoredBlob } from "../blobs/store";
import type { Executor, Store } from "../db/store";
import { conflict, forbidden, notFound, payloadTooLarge } from "../shared/app-error";
import type { Cursors } from "../shared/cursors";
import { newId } from "../lib/ids";
import { describeBytes } from "../lib/bytes";
import type { Logger } from "../lib/log";
import { pager, seqAfter, type PageRequest } from "../shared/pagination";
import type { Outbox } from "../search";
import type { WorkspaceService } from "../workspaces/service";
import { normalizeType, PRESIGN_TTL_MS, type Presigner } from "./presign";
import type { NotIndexedReason } from "./pdf-text-protocol";
import type { FileRepository, FileRow } from "./repository";
import {
  MAX_INDEXED_TEXT_BYTES,
  readPrefix,
  splitBlocks,
  textIndexing,
  textKind,
  type TextIndexing,
  type TextStatus,
} from "./text";
import { plainSizeOf, sealedSize, sealStream } from "../crypto/file-seal";
import { downloadOf, sealContext, type Download } from "./download";

export interface FileServiceDeps {
  repo: FileRepository;
  blobs: BlobStore;
  presigner: Presigner;
  outbox: Outbox;
  workspaces: WorkspaceService;
  store: Store;
  cursors: Cursors;
  log: Logger;
  maxFileBytes: number;
  /** A PDF was stored with its text pending: the PDF text runner reads it in a child process. */
  onTextPending?: () => void;
  /**
   * Who else keeps blobs in the file store (upload parts): the orphan sweep leaves theirs.
   * Asked before the files, so a part that becomes a file meanwhile (an upload completing)
   * is seen as one or the other.
   */
  otherBlobHolders?: BlobHolder[];
}

/** A holder of blobs in the file store, as the orphan sweep asks it. */
export interface BlobHolder {
  blobIds(tx: Executor): Promise<Set<string>>;
  holds(tx: Executor, blobId: string): Promise<boolean>;
}

/** A file as the API shows it. */
export interface FileInfo {
  key: string;
  name: string;
  type: string;
  size: number;
  sha256: string;
  createdAt: string;
  omniUri: string;
  /** Present (true) when the bytes are stored sealed with the owner's client key. */
  sealed?: true;
  indexing: TextIndexing;
}

/** What a stored file is about to be (the bytes arrive separately). */
export interface NewFile {
  ownerId: string;
  workspaceId: string;
  key: string;
  name: string;
  contentType: string;
  /** Kept on import/restore; now otherwise. */
  createdAt?: string;
  /** The blob holds the bytes sealed with the owner's client key (reverse-proxy mode): no text is extracted. */
  sealed?: boolean;
}

export const omniUri = (workspaceId: string, key: string) => `svc://files/${workspaceId}/${key}`;
/** `size` is the file's own (plaintext) size; for a sealed file `sha256` is of the sealed bytes as stored. */
export const toFileInfo = (f: FileRow): FileInfo => ({
  key: f.key,
  name: f.name,
  type: f.contentType,
  size: f.sealed ? (plainSizeOf(f.size) ?? f.size) : f.size,
  sha256: f.sha256,
  createdAt: f.createdAt,
  omniUri: omniUri(f.workspaceId, f.key),
  ...(f.sealed ? { sealed: true as const } : {}),
  indexing: textIndexing(f),
});

/** The text state of a file stored sealed: never read, so never indexed. */
const SEALED_TEXT = { blocks: [] as string[], status: "not_indexed" as const, reason: "sealed" as const };

/** Why a presigned URL is refused once its upload has committed. */
const URL_USED =
  "signature: this upload URL was already used (a URL is good for one upload); ask files/upload-url for a new one";

/**
 * Files of a workspace: presigned uploads, persisting (the same path for presigned PUTs,
 * completed upload sessions and imports), listing, reading and deleting. Text files are
 * split into blocks kept in the store of record and queued for the search index.
 */
export function createFileService(d: FileServiceDeps) {
  const { repo, blobs, store } = d;

  /**
   * Text blocks of a stored text file, read here (capped, cheap); a PDF is left pending for
   * the PDF text runner, which reads it in a child process off the request.
   */
  async function extractBlocks(
    blob: StoredBlob,
    contentType: string,
  ): Promise<{ blocks: string[]; status: TextStatus; reason: NotIndexedReason | null }> {
    const kind = textKind(contentType);
    if (kind === "pdf") return { blocks: [], status: "pending", reason: null };
    if (kind !== "text") return { blocks: [], status: "not_indexed", reason: "type" };
    const bytes = await readPrefix(blobs.read(blob.blobId, blob.size), MAX_INDEXED_TEXT_BYTES);
    return { blocks: splitBlocks(new TextDecoder().decode(bytes)), status: "indexed", reason: null };
  }

  /**
   * Records a written blob as the file `file.key` (replacing an earlier version), indexes its text, frees the old blob.
   * `intentKey`: the presigned URL this upload used, marked used in the same transaction (a second upload gets 409).
   */
  async function persist(file: NewFile, blob: StoredBlob, intentKey?: string): Promise<FileRow> {
    let previousBlob: string | null = null;
    let saved: FileRow;
    try {
      // Sealed bytes are never read for text: nothing of them reaches the store or the index in plaintext.
      const { blocks, status, reason } = file.sealed ? SEALED_TEXT : await extractBlocks(blob, file.contentType);
      const now = new Date().toISOString();
      saved = await store.transaction(async (tx) => {
        await d.workspaces.requireOwned(file.ownerId, file.workspaceId, tx);
        if (intentKey !== undefined && !(await repo.useIntent(tx, intentKey, Date.now()))) throw conflict(URL_USED);
        const existing = await repo.getByKey(tx, file.key);
        if (existing && (existing.ownerId !== file.ownerId || existing.workspaceId !== file.workspaceId))
          throw forbidden(`key: '${file.key}' belongs to another workspace`);
        previousBlob = existing?.blobId ?? null;
        const row = {
          ownerId: file.ownerId,
          workspaceId: file.workspaceId,
          key: file.key,
          name: file.name,
          contentType: file.contentType,
          size: blob.size,
          sha256: blob.sha256,
          blobId: blob.blobId,
          createdAt: existing?.createdAt ?? file.createdAt ?? now,
          updatedAt: now,
          sealed: !!file.sealed,
        };
        await repo.upsert(tx, row);
        await repo.setTextState(tx, file.key, blob.blobId, status, reason);
        await repo.setBlocks(tx, file.ownerId, file.key, blocks);
        if (blocks.length || existing)
          await d.outbox.enqueue(
            tx,
            { ownerId: file.ownerId, kind: "file", sourceId: file.key },
            existing ? "sync" : "insert",
          );
        return { seq: 0, ...row, textStatus: status, textReason: reason };
      });
    } catch (error) {
      await blobs.delete(blob.blobId).catch(() => {});
      throw error;
    }
    if (previousBlob && previousBlob !== blob.blobId)
      await blobs.delete(previousBlob).catch((error) => d.log.warn("old blob not removed", { error }));
    if (saved.textStatus === "pending") d.onTextPending?.();
    return saved;
  }

  /**
   * Streams bytes into a new blob, turning "too large" into the API's 413. With `seal`, the
   * bytes are sealed on the way (the limit still counts the file's own bytes).
   */
  async function writeBlob(
    source: AsyncIterable<Uint8Array>,
    seal?: { key: Buffer; fileKey: string },
  ): Promise<StoredBlob> {
    try {
      if (seal)
        return await blobs.write(sealStream(source, seal.key, sealContext(seal.fileKey)), {
          maxBytes: sealedSize(d.maxFileBytes),
        });
      return await blobs.write(source, { maxBytes: d.maxFileBytes });
    } catch (error) {
      if (error instanceof BlobTooLarge)
        throw payloadTooLarge(
          `body: is larger than ${describeBytes(d.maxFileBytes)}, the largest file this server accepts (MNEMO_MAX_FILE_BYTES)`,
        );
      throw error;
    }
  }

  async function require(ownerId: string, workspaceId: string, key: string): Promise<FileRow> {
    await d.workspaces.requireOwned(ownerId, workspaceId);
    const file = await repo.get(store.db, ownerId, workspaceId, key);
    if (!file) throw notFound(`file '${key}' not found`);
    return file;
  }

  return {
    maxFileBytes: d.maxFileBytes,

    /** Issues a presigned PUT URL (15 minutes) for a new file of this workspace. */
    async createUploadUrl(
      ownerId: string,
      workspaceId: string,
      body: { filename: string; contentType: string },
      origin: string,
    ) {
      await d.workspaces.requireOwned(ownerId, workspaceId);
      const key = newId("file");
      const expiresAt = Date.now() + PRESIGN_TTL_MS;
      const expires = Math.floor(expiresAt / 1000);
      await store.transaction(async (tx) => {
        await repo.dropExpiredIntents(tx, Date.now());
        await repo.putIntent(tx, {
          key,
          ownerId,
          workspaceId,
          name: body.filename,
          contentType: normalizeType(body.contentType),
          expiresAt: expires * 1000,
        });
      });
      const signature = d.presigner.sign({ method: "PUT", workspaceId, key, contentType: body.contentType, expires });
      const url = `${origin}/v1/workspaces/${encodeURIComponent(workspaceId)}/files/${key}?expires=${expires}&signature=${signature}`;
      return {
        url,
        key,
        method: "PUT" as const,
        omniUri: omniUri(workspaceId, key),
        expiresAt: new Date(expires * 1000).toISOString(),
      };
    },

    /**
     * The presigned PUT: the signature must cover this workspace, key, content type and
     * an unexpired time; the body streams into the blob store, counted against the limit.
     */
    async putSigned(input: {
      workspaceId: string;
      key: string;
      expires?: string;
      signature?: string;
      contentType: string | null;
      contentLength: string | null;
      body: ReadableStream<Uint8Array> | null;
      /** The key to seal with for this owner (reverse-proxy mode), undefined to store as sent; throws 400 when one is needed and none resolves. */
      sealKey: (ownerId: string) => Promise<Buffer | undefined>;
    }): Promise<FileInfo> {
      const expires = Number(input.expires);
      const contentType = input.contentType ?? "";
      if (!input.signature || !Number.isInteger(expires))
        throw forbidden("signature: missing; upload with the URL from files/upload-url");
      if (
        !d.presigner.verify(
          { method: "PUT", workspaceId: input.workspaceId, key: input.key, contentType, expires },
          input.signature,
        )
      ) {
        throw forbidden(
          "signature: does not match this URL and content type (the Content-Type header must be the one the URL was issued for)",
        );
      }
      if (expires * 1000 < Date.now())
        throw forbidden("signature: the upload URL has expired; ask files/upload-url for a new one");
      const intent = await repo.intent(store.db, input.key);
      if (!intent || intent.workspaceId !== input.workspaceId)
        throw forbidden("signature: the upload URL is no longer valid");
      // Checked again when the upload commits (two PUTs at once: the first to commit wins).
      if (intent.usedAt !== null) throw conflict(URL_USED);
      if (input.contentLength !== null && Number(input.contentLength) > d.maxFileBytes) {
        throw payloadTooLarge(
          `body: is larger than ${describeBytes(d.maxFileBytes)}, the largest file this server accepts (MNEMO_MAX_FILE_BYTES)`,
        );
      }
      const key = await input.sealKey(intent.ownerId);
      const blob = await writeBlob(input.body ?? emptyStream(), key && { key, fileKey: intent.key });
      const file = {
        ownerId: intent.ownerId,
        workspaceId: intent.workspaceId,
        key: intent.key,
        name: intent.name,
        contentType: intent.contentType,
        sealed: !!key,
      };
      return toFileInfo(await persist(file, blob, intent.key));
    },

    writeBlob,
    persist,

    /** Stores a whole file from a stream under a given key (upload sessions); sealed with `sealKey` when given. */
    async store(file: NewFile, source: AsyncIterable<Uint8Array>, sealKey?: Buffer): Promise<FileRow> {
      return persist(
        { ...file, sealed: !!sealKey },
        await writeBlob(source, sealKey && { key: sealKey, fileKey: file.key }),
      );
    },

    async list(ownerId: string, workspaceId: string, request: PageRequest) {
      await d.workspaces.requireOwned(ownerId, workspaceId);
      const paging = pager(d.cursors, ownerId, `files:${workspaceId}`);
      const { limit, after } = paging.start(request);
      const rows = await repo.page(store.db, ownerId, workspaceId, seqAfter(after), limit + 1);
      const page = paging.page(rows, limit, (row) => String(row.seq));
      return { files: page.items.map(toFileInfo), nextCursor: page.nextCursor, hasMore: page.hasMore };
    },

    /** A file's metadata; 404 for a key that is not this owner's in this workspace. */
    async get(ownerId: string, workspaceId: string, key: string): Promise<FileRow> {
      return require(ownerId, workspaceId, key);
    },

    /**
     * What a download of the file sends: its bytes, or for a sealed file opened with
     * `openKey` (X-Proxy-Decrypt) the plaintext; a key that does not open it leaves the
     * sealed bytes, counted in `decryptErrors` (as a note that does not open).
     */
    async download(ownerId: string, workspaceId: string, key: string, openKey: Buffer | null): Promise<Download> {
      const file = await require(ownerId, workspaceId, key);
      // Checked before any header is sent: a stream failing after the 200 is a truncated download.
      if (!file.blobId || !(await blobs.exists(file.blobId))) {
        throw conflict(
          `key: the bytes of ${key} are not stored here (imported from an export made without --with-files?); upload it again`,
        );
      }
      return downloadOf(blobs, file, openKey);
    },

    /** Bytes of a file row already read (export, backup). */
    read: (file: FileRow) => blobs.read(file.blobId, file.size),

    /** Every file of one owner (or of all, with null), in upload order: export and backup. */
    async *all(ownerId: string | null): AsyncGenerator<FileRow> {
      for (let after = 0; ; ) {
        const rows = await repo.pageAll(store.db, ownerId, after, 500);
        yield* rows;
        if (rows.length < 500) return;
        after = rows[rows.length - 1].seq;
      }
    },

    /**
     * Removes blobs no file or upload part points at and last written over `minAgeMs` ago:
     * left by a crash between writing the bytes and committing their row. The age keeps
     * uploads in flight (bytes written, row not yet committed) safe.
     */
    async sweepOrphanBlobs(minAgeMs = 24 * 60 * 60 * 1000): Promise<string[]> {
      const holders = [...(d.otherBlobHolders ?? []), repo];
      const referenced = new Set<string>();
      for (const holder of holders) for (const blobId of await holder.blobIds(store.db)) referenced.add(blobId);
      const removed: string[] = [];
      for (const blobId of await blobs.list()) {
        if (referenced.has(blobId)) continue;
        const writtenAt = await blobs.writtenAt(blobId);
        if (writtenAt === null || Date.now() - writtenAt < minAgeMs) continue;
        // Re-checked: a row may have been committed since the first read.
        if (await held(holders, store.db, blobId)) continue;
        await blobs.delete(blobId);
        removed.push(blobId);
      }
      return removed;
    },

    async delete(ownerId: string, workspaceId: string, key: string): Promise<{ deleted: true; key: string }> {
      const file = await require(ownerId, workspaceId, key);
      await store.transaction(async (tx) => {
        await repo.delete(tx, ownerId, key);
        await d.outbox.enqueue(tx, { ownerId, kind: "file", sourceId: key }, "sync");
      });
      await blobs.delete(file.blobId).catch((error) => d.log.warn("blob not removed", { error }));
      return { deleted: true, key };
    },
  };
}
export type FileService = ReturnType<typeof createFileService>;

/** Whether any holder points at the blob, asked in order. */
async function held(holders: BlobHolder[], db: Executor, blobId: string): Promise<boolean> {
  for (const holder of holders) if (await holder.holds(db, blobId)) return true;
  return false;
}

function emptyStream(): ReadableStream<Uint8Array> {
  return new ReadableStream({ start: (controller) => controller.close() });
}
