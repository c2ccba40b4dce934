import type { BlobStore } from "../blobs/store";
import { openSealed, plainSize, SealedFileError, sealStream } from "../crypto/file-seal";
import type { Store } from "../db/store";
import { AppError, badRequest, conflict, notFound, payloadTooLarge } from "../shared/app-error";
import type { FileService } from "../files/service";
import { normalizeType } from "../files/presign";
import { newId } from "../lib/ids";
import { describeBytes } from "../lib/bytes";
import type { Logger } from "../lib/log";
import type { WorkspaceService } from "../workspaces/service";
import type { UploadRepository, UploadSession } from "./repository";

/** What a workspace delete asks of uploads, in its transaction: remove the workspace's open uploads and name their parts' blobs. */
export type UploadPurge = Pick<UploadRepository, "deleteWorkspace">;

/** Bounds of upload sessions, so no client can exhaust the server. */
export const UPLOAD_LIMITS = {
  /** Decoded bytes of one part. */
  partBytes: 8 * 1024 * 1024,
  parts: 10_000,
  /** Open (not idle-expired) sessions per user. */
  openPerUser: 20,
  /** A session untouched this long is gone, with its parts. */
  idleMs: 60 * 60 * 1000,
} as const;

const BASE64 = /^(?:[A-Za-z0-9+/]*={0,2}|[A-Za-z0-9_-]*)$/;

/** What a sealed part's chunks are bound to: its session and number, so parts cannot be swapped. */
const partContext = (uploadId: string, partNumber: number) => `part:${uploadId}:${partNumber}`;

/** The client key a sealed session's bytes are sealed and opened with (resolved per request; none is a 400). */
export type SealKey = () => Promise<Buffer>;

export interface UploadServiceDeps {
  repo: UploadRepository;
  files: FileService;
  blobs: BlobStore;
  workspaces: WorkspaceService;
  store: Store;
  log: Logger;
  /** The most bytes a whole upload may add up to (MNEMO_MAX_FILE_BYTES). */
  maxFileBytes: number;
}

/**
 * Multipart uploads: a session belongs to the principal that started it (another user
 * gets 404), parts are blobs in the blob store (every replica reaches them, no process
 * holds them), and `complete` streams them in order into one file through the same
 * persist path as a presigned PUT.
 */
export function createUploadService(d: UploadServiceDeps) {
  const { repo, store, blobs } = d;

  const freeBlobs = async (ids: string[]) => {
    for (const id of ids) await blobs.delete(id).catch((error) => d.log.warn("part blob not removed", { error }));
  };

  /** Removes sessions idle past the limit (anyone's), a few per call: run on every start. */
  async function sweep(now: number): Promise<void> {
    const ids = await repo.idle(store.db, now - UPLOAD_LIMITS.idleMs, 20);
    for (const id of ids) await freeBlobs(await store.transaction((tx) => repo.delete(tx, id)));
  }

  /** The caller's live session: 404 for another user's id or an idle-expired one. */
  async function session(ownerId: string, uploadId: string, now: number): Promise<UploadSession> {
    const found = await repo.get(store.db, ownerId, uploadId);
    if (!found) throw notFound(`upload '${uploadId}' not found`);
    if (found.touchedAt < now - UPLOAD_LIMITS.idleMs) {
      await freeBlobs(await store.transaction((tx) => repo.delete(tx, uploadId)));
      throw notFound(`upload '${uploadId}' expired after an hour without parts`);
    }
    return found;
  }

  return {
    /** `sealed`: reverse-proxy mode, where the parts and the file are sealed with the owner's client key. */
    async start(
      ownerId: string,
      body: { workspaceId: string; filename: string; contentType: string },
      sealed = false,
    ): Promise<{ uploadId: string }> {
      await d.workspaces.requireOwned(ownerId, body.workspaceId);
      const now = Date.now();
      await sweep(now);
      if ((await repo.countOpen(store.db, ownerId, now - UPLOAD_LIMITS.idleMs)) >= UPLOAD_LIMITS.openPerUser) {
        throw new AppError(
          429,
          "rate_limited",
          `uploads: at most ${UPLOAD_LIMITS.openPerUser} open upload sessions per user; complete one or let it expire (1 hour idle)`,
          {
            "retry-after": String(Math.ceil(UPLOAD_LIMITS.idleMs / 1000)),
          },
        );
      }
      const uploadId = newId("upl");
      await store.transaction((tx) =>
        repo.insert(tx, {
          id: uploadId,
          ownerId,
          workspaceId: body.workspaceId,
          name: body.filename,
          contentType: normalizeType(body.contentType),
          totalBytes: 0,
          createdAt: now,
          touchedAt: now,
          sealed,
        }),
      );
      return { uploadId };
    },

    /** Stores one part (replacing an earlier part of the same number). `data` is base64. */
    async part(
      ownerId: string,
      uploadId: string,
      body: { partNumber: number; data: string },
      sealKey: SealKey,
    ): Promise<{ uploaded: true }> {
      const now = Date.now();
      const found = await session(ownerId, uploadId, now);
      if (!Number.isInteger(body.partNumber) || body.partNumber < 1 || body.partNumber > UPLOAD_LIMITS.parts) {
        throw badRequest(`partNumber: must be an integer from 1 to ${UPLOAD_LIMITS.parts}`);
      }
      if (!BASE64.test(body.data)) throw badRequest("data: must be base64 (standard or URL-safe alphabet)");
      const bytes = Buffer.from(body.data, "base64");
      if (bytes.byteLength > UPLOAD_LIMITS.partBytes)
        throw payloadTooLarge(`data: a part holds at most ${describeBytes(UPLOAD_LIMITS.partBytes)} (decoded)`);
      const blob = await blobs.write(
        found.sealed ? sealStream([bytes], await sealKey(), partContext(uploadId, body.partNumber)) : [bytes],
      );
      // Totals count the bytes as sent, so the MNEMO_MAX_FILE_BYTES cap is the same sealed or not.
      const sentBytes = (size: number) => (found.sealed ? plainSize(size) : size);
      let replaced: string | null = null;
      try {
        await store.transaction(async (tx) => {
          const current = await repo.get(tx, ownerId, uploadId, true);
          if (!current) throw notFound(`upload '${uploadId}' not found`);
          if (await repo.completing(tx, uploadId)) throw conflict(`upload '${uploadId}' is being completed`);
          const previous = await repo.part(tx, uploadId, body.partNumber);
          const total = current.totalBytes - (previous ? sentBytes(previous.size) : 0) + bytes.byteLength;
          if (total > d.maxFileBytes)
            throw payloadTooLarge(
              `data: the upload would exceed ${describeBytes(d.maxFileBytes)} (MNEMO_MAX_FILE_BYTES)`,
            );
          await repo.putPart(tx, uploadId, { partNumber: body.partNumber, blobId: blob.blobId, size: blob.size });
          await repo.touch(tx, uploadId, total, now);
          replaced = previous?.blobId ?? null;
        });
      } catch (error) {
        await freeBlobs([blob.blobId]);
        throw error;
      }
      if (replaced) await freeBlobs([replaced]);
      return { uploaded: true };
    },

    /** Assembles the parts in order into a stored file; a gap is a 400 naming the first missing part. */
    async complete(ownerId: string, uploadId: string, sealKey: SealKey): Promise<{ key: string; completed: true }> {
      const now = Date.now();
      const found = await session(ownerId, uploadId, now);
      const key = found.sealed ? await sealKey() : undefined;
      const parts = await repo.parts(store.db, uploadId);
      if (!parts.length) throw badRequest("partNumber: no parts were uploaded; send part 1 first");
      const missing = parts.findIndex((part, i) => part.partNumber !== i + 1);
      if (missing !== -1)
        throw badRequest(`partNumber: part ${missing + 1} is missing (parts must be numbered 1, 2, 3, … without gaps)`);
      if (!(await store.transaction((tx) => repo.claim(tx, uploadId, now))))
        throw conflict(`upload '${uploadId}' is being completed`);
      let fileKey: string;
      try {
        // Parts re-read under the claim: no part can change any more.
        const claimed = await repo.parts(store.db, uploadId);
        async function* assembled() {
          for (const part of claimed) {
            if (!key) {
              yield* blobs.read(part.blobId, part.size);
              continue;
            }
            try {
              yield* openSealed(
                (range) => blobs.read(part.blobId, part.size, range),
                part.size,
                key,
                partContext(uploadId, part.partNumber),
              );
            } catch (error) {
              if (error instanceof SealedFileError)
                throw badRequest(
                  `X-Client-Key: part ${part.partNumber} does not open with this client key; send the key the parts were sent with`,
                );
              throw error;
            }
          }
        }
        const file = {
          ownerId,
          workspaceId: found.workspaceId,
          key: newId("file"),
          name: found.name,
          contentType: found.contentType,
        };
        fileKey = (await d.files.store(file, assembled(), key)).key;
      } catch (error) {
        await store.transaction((tx) => repo.release(tx, uploadId));
        throw error;
      }
      await freeBlobs(await store.transaction((tx) => repo.delete(tx, uploadId)));
      return { key: fileKey, completed: true };
    },
  };
}
export type UploadService = ReturnType<typeof createUploadService>;
