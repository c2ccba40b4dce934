import type { BlobStore } from "../blobs/store";
import {
  openSealedRange,
  plainSize,
  SEALED_CONTENT_TYPE,
  SealedFileError,
  type SealedReader,
} from "../crypto/file-seal";
import { DECRYPT_ERRORS_HEADER } from "../crypto/plugin";
import { AppError } from "../shared/app-error";
import type { FileRow } from "./repository";

/** `[start, end)` in bytes. */
export interface ByteRange {
  start: number;
  end: number;
}

/** What a download sends: the stored bytes, or a sealed file's plaintext. */
export interface Download {
  contentType: string;
  size: number;
  /** Strong, quoted: the stored bytes' SHA-256; a sealed file's plaintext adds `-opened`. */
  etag: string;
  filename: string;
  /** 1 when a key was given and did not open the sealed file (its sealed bytes are sent). */
  decryptErrors: number;
  stream(range: ByteRange | null): Promise<ReadableStream<Uint8Array>>;
}

/** What a file's chunks are bound to when sealed: its key, so chunks cannot move to another file. */
export const sealContext = (fileKey: string) => `file:${fileKey}`;

/**
 * The download of `file`. A sealed file is sent as stored (its sealed bytes, typed
 * `application/vnd.mnemo.sealed-file`) unless `openKey` opens it, as a note's ciphertext
 * is returned unchanged without X-Proxy-Decrypt or a key.
 */
export async function downloadOf(blobs: BlobStore, file: FileRow, openKey: Buffer | null): Promise<Download> {
  const stored: Download = {
    size: file.size,
    etag: `"${file.sha256}"`,
    contentType: file.sealed ? SEALED_CONTENT_TYPE : file.contentType,
    filename: file.sealed ? `${file.name}.sealed` : file.name,
    decryptErrors: 0,
    stream: async (range) => blobs.read(file.blobId, file.size, range ?? {}),
  };
  if (!file.sealed || !openKey) return stored;
  const read: SealedReader = (range) => blobs.read(file.blobId, file.size, range);
  const context = sealContext(file.key);
  let size = 0;
  try {
    size = plainSize(file.size);
    // The first chunk opened up front: a key that does not open the file is known before any header is sent.
    await (await openSealedRange(read, file.size, openKey, context, { start: 0, end: Math.min(size, 1) })).cancel();
  } catch (error) {
    if (error instanceof SealedFileError) return { ...stored, decryptErrors: 1 };
    throw error;
  }
  return {
    size,
    etag: `"${file.sha256}-opened"`,
    contentType: file.contentType,
    filename: file.name,
    decryptErrors: 0,
    stream: (range) => openSealedRange(read, file.size, openKey, context, range ?? { start: 0, end: size }),
  };
}

/**
 * The HTTP answer to a download: 304 when `If-None-Match` names the ETag, 206 for one
 * satisfiable `Range` (ignored when an `If-Range` does not name the ETag), 416 for an
 * unsatisfiable one, else 200.
 */
export async function downloadResponse(download: Download, headers: Headers): Promise<Response> {
  const common: Record<string, string> = { etag: download.etag, "accept-ranges": "bytes" };
  if (download.decryptErrors) common[DECRYPT_ERRORS_HEADER.toLowerCase()] = String(download.decryptErrors);
  if (matchesAny(headers.get("if-none-match"), download.etag))
    return new Response(null, { status: 304, headers: common });
  const ifRange = headers.get("if-range");
  // If-Range is compared strongly; a date never matches (no Last-Modified is sent), so the whole file goes.
  const rangeHeader = ifRange !== null && ifRange.trim() !== download.etag ? null : headers.get("range");
  const range = parseRange(rangeHeader, download.size);
  const stream = await download.stream(range);
  const out: Record<string, string> = {
    ...common,
    "content-type": download.contentType,
    "content-length": String(range ? range.end - range.start : download.size),
    "content-disposition": `attachment; filename*=UTF-8''${encodeURIComponent(download.filename)}`,
    "x-content-type-options": "nosniff",
  };
  if (range) out["content-range"] = `bytes ${range.start}-${range.end - 1}/${download.size}`;
  return new Response(stream, { status: range ? 206 : 200, headers: out });
}

/** Whether an `If-None-Match` value names `etag` (weak comparison, RFC 9110, section 13.1.2), or is `*`. */
export function matchesAny(header: string | null, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === "*") return true;
  return (header.match(/(?:W\/)?"[^"]*"/g) ?? []).some((tag) => tag.replace(/^W\//, "") === etag);
}

/** A parsed `Range` header: `[start, end)`, or null to send everything. Throws 416 when unsatisfiable. */
export function parseRange(header: string | null | undefined, size: number): ByteRange | null {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  // Several ranges or another unit: answer the whole file, as RFC 9110 allows.
  if (!match || (!match[1] && !match[2])) return null;
  let start: number;
  let end: number;
  if (!match[1]) {
    start = Math.max(0, size - Number(match[2]));
    end = size;
  } else {
    start = Number(match[1]);
    end = match[2] ? Math.min(size, Number(match[2]) + 1) : size;
  }
  if (start >= size || end <= start) {
    throw new AppError(416, "invalid_request", `range: '${header}' is outside the file's ${size} bytes`, {
      "content-range": `bytes */${size}`,
    });
  }
  return { start, end };
}
