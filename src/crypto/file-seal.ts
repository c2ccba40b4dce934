import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * Chunked AES-256-GCM for file bytes (reverse-proxy mode), so a download can open any
 * byte range without reading the file from the start.
 *
 * Layout: an 8-byte magic (`MNEMOSF1`), then chunks of `iv (12) ‖ ciphertext ‖ tag (16)`,
 * each holding `SEALED_CHUNK_BYTES` of plaintext except the last (1 to that many; an empty
 * file is one empty chunk). Every chunk has a fresh random IV and authenticates, as
 * associated data, the format, the sealing context (`file:<key>` for a file), its index
 * and whether it is the last one: chunks cannot be reordered, moved to another file,
 * dropped from the middle or cut off at the end without failing to open.
 */
export const SEALED_CHUNK_BYTES = 64 * 1024;
/** The content type of a file's bytes downloaded as stored (not decrypted). */
export const SEALED_CONTENT_TYPE = "application/vnd.mnemo.sealed-file";

const MAGIC = Buffer.from("MNEMOSF1", "ascii");
const IV_BYTES = 12;
const TAG_BYTES = 16;
const OVERHEAD = IV_BYTES + TAG_BYTES;
const FRAME_BYTES = SEALED_CHUNK_BYTES + OVERHEAD;
const AAD_PREFIX = "mnemo.file-seal.v1";

/** Thrown when a chunk does not open: wrong key, tampered, moved, reordered or truncated bytes. */
export class SealedFileError extends Error {
  constructor(readonly chunk: number) {
    super(`sealed file: chunk ${chunk} does not open (wrong key, or the bytes were altered)`);
    this.name = "SealedFileError";
  }
}

/** Chunks a plaintext of `plainSize` bytes is sealed into (at least one). */
const chunkCount = (plainSize: number) => Math.max(1, Math.ceil(plainSize / SEALED_CHUNK_BYTES));

/** Bytes of the sealed form of a plaintext of `plainSize` bytes. */
export function sealedSize(plainSize: number): number {
  return MAGIC.length + chunkCount(plainSize) * OVERHEAD + plainSize;
}

/** Bytes of the plaintext a sealed form of `size` bytes holds, or null when no plaintext seals to that size. */
export function plainSizeOf(size: number): number | null {
  const body = size - MAGIC.length;
  const chunks = Math.ceil(body / FRAME_BYTES);
  const plain = body - chunks * OVERHEAD;
  return chunks >= 1 && plain >= 0 && sealedSize(plain) === size ? plain : null;
}

/** `plainSizeOf`, throwing `SealedFileError` when `size` is no sealed size (the stored form was altered). */
export function plainSize(size: number): number {
  const plain = plainSizeOf(size);
  if (plain === null) throw new SealedFileError(0);
  return plain;
}

function chunkAad(context: string, index: number, final: boolean): Buffer {
  const head = Buffer.from(`${AAD_PREFIX}\0${context}\0`, "utf8");
  const tail = Buffer.alloc(9);
  tail.writeBigUInt64BE(BigInt(index));
  tail[8] = final ? 1 : 0;
  return Buffer.concat([head, tail]);
}

function sealChunk(plain: Uint8Array, key: Buffer, context: string, index: number, final: boolean): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(chunkAad(context, index, final));
  return Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
}

function openChunk(frame: Uint8Array, key: Buffer, context: string, index: number, final: boolean): Buffer {
  if (frame.byteLength < OVERHEAD) throw new SealedFileError(index);
  const bytes = Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(chunkAad(context, index, final));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
  } catch {
    throw new SealedFileError(index);
  }
}

/**
 * Seals a byte stream as it flows (one chunk plus one incoming piece buffered).
 *
 * @example await blobs.write(sealStream(request.body, key, `file:${fileKey}`))
 */
export async function* sealStream(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  key: Buffer,
  context: string,
): AsyncGenerator<Uint8Array> {
  yield MAGIC;
  let pending = Buffer.alloc(0);
  let index = 0;
  for await (const piece of source) {
    pending = pending.length ? Buffer.concat([pending, piece]) : Buffer.from(piece);
    // A chunk is sealed only once more bytes follow it: the last one is marked final.
    while (pending.length > SEALED_CHUNK_BYTES) {
      yield sealChunk(pending.subarray(0, SEALED_CHUNK_BYTES), key, context, index++, false);
      pending = pending.subarray(SEALED_CHUNK_BYTES);
    }
  }
  yield sealChunk(pending, key, context, index, true);
}

/**
 * Where the plaintext range `[start, end)` lies in a sealed form of `size` bytes: the
 * sealed bytes to read (whole chunks), the first chunk's index and the number of chunks.
 */
export function sealedSpan(size: number, range: { start: number; end: number }) {
  const plain = plainSize(size);
  const first = Math.floor(range.start / SEALED_CHUNK_BYTES);
  const last = Math.max(first, Math.floor((Math.max(range.end, 1) - 1) / SEALED_CHUNK_BYTES));
  return {
    plain,
    firstChunk: first,
    chunks: chunkCount(plain),
    read: { start: MAGIC.length + first * FRAME_BYTES, end: Math.min(size, MAGIC.length + (last + 1) * FRAME_BYTES) },
  };
}

/** Reads sealed bytes `[start, end)` of the stored form (a blob store read). */
export type SealedReader = (range: { start: number; end: number }) => ReadableStream<Uint8Array>;

/**
 * Opens the plaintext `[start, end)` of a sealed form of `size` bytes. The first chunk is
 * opened before this returns, so a wrong key is known before anything is sent; a later
 * chunk that does not open fails the stream (`SealedFileError`).
 */
export async function openSealedRange(
  read: SealedReader,
  size: number,
  key: Buffer,
  context: string,
  range: { start: number; end: number },
): Promise<ReadableStream<Uint8Array>> {
  const span = sealedSpan(size, range);
  const frames = framesOf(read(span.read));
  const opened = (async function* () {
    try {
      for (let index = span.firstChunk; ; index++) {
        const frame = await frames.next();
        // Fewer chunks than the size promises: the sealed bytes were cut short.
        if (frame.done) throw new SealedFileError(index);
        const plain = openChunk(frame.value, key, context, index, index === span.chunks - 1);
        const offset = index * SEALED_CHUNK_BYTES;
        const lo = Math.max(0, range.start - offset);
        const hi = Math.min(plain.length, range.end - offset);
        if (hi > lo) yield plain.subarray(lo, hi);
        if (offset + plain.length >= range.end) return;
      }
    } finally {
      // Closes the blob read (its table handle) however the reading ends.
      await frames.return(undefined);
    }
  })();
  const head = await opened.next();
  let held: Uint8Array | null = head.done ? null : head.value;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (held) {
          controller.enqueue(held);
          held = null;
          return;
        }
        const next = await opened.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
      // Runs the generator's `finally`, which closes the blob read.
      async cancel() {
        await opened.return(undefined);
      },
    },
    { highWaterMark: 1 },
  );
}

/** Every plaintext byte of a sealed form of `size` bytes, in order (upload parts being joined). */
export async function* openSealed(
  read: SealedReader,
  size: number,
  key: Buffer,
  context: string,
): AsyncGenerator<Uint8Array> {
  const stream = await openSealedRange(read, size, key, context, { start: 0, end: plainSize(size) });
  yield* stream;
}

/** Regroups a byte stream into whole sealed frames (the last may be shorter). */
async function* framesOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  let pending = Buffer.alloc(0);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      pending = pending.length ? Buffer.concat([pending, value]) : Buffer.from(value);
      while (pending.length >= FRAME_BYTES) {
        yield pending.subarray(0, FRAME_BYTES);
        pending = pending.subarray(FRAME_BYTES);
      }
    }
    if (pending.length) yield pending;
  } finally {
    await reader.cancel().catch(() => {});
  }
}
