import * as lancedb from "@lancedb/lancedb";
import { Binary, Field, Int32, makeData, RecordBatch, Schema, Struct, Table as ArrowTable } from "apache-arrow";
import { createHash, randomUUID } from "node:crypto";
import type { Config } from "../config";
import { indexLocation, type LanceLocation } from "../search";

/** Bytes per row: a Range request maps to rows by arithmetic, and a row is all a stream holds at once. */
export const BLOB_CHUNK_BYTES = 1024 * 1024;
/** Rows per LanceDB `add()`: each add is one fragment, so a 100 MB file is 25 fragments, 4 MB buffered at most. */
const ROWS_PER_ADD = 4;
/** Rows fetched per query while reading. */
const ROWS_PER_READ = 2;

const blobSchema = () => new Schema([new Field("seq", new Int32(), false), new Field("data", new Binary(), false)]);
const tableName = (blobId: string) => `b_${blobId}`;
const BLOB_ID = /^[0-9a-f]{32}$/;

export interface StoredBlob {
  blobId: string;
  size: number;
  /** Hex SHA-256 of the bytes. */
  sha256: string;
}

/** Thrown while writing when the bytes pass `maxBytes`; the partial blob is already removed. */
export class BlobTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`blob is larger than ${limit} bytes`);
  }
}

/**
 * Where blobs live: `MNEMO_BLOBS_URI` (default `<data>/blobs`, or `<index uri>-blobs`
 * when the index is shared), with the index's object-storage options. Its own LanceDB
 * connection and directory: `dropAll()` of the index, reindex and index clear never see it.
 */
export function blobsLocation(config: Config): LanceLocation {
  const index = indexLocation(config);
  const s3 = config.files.blobsUri.startsWith("s3://");
  // Blobs never change once written and every read opens its table afresh: no refresh polling.
  return { uri: config.files.blobsUri, storageOptions: s3 ? index.storageOptions : undefined };
}

/**
 * The blob store: one LanceDB table per blob (`b_<id>`), rows of `BLOB_CHUNK_BYTES`.
 * A table per blob means a delete frees the space at once (no compaction of a shared
 * table), and concurrent uploads from several replicas never commit to the same table.
 * Blobs are immutable once written; bytes stream in and out, never whole in memory.
 */
export class BlobStore {
  private constructor(
    private readonly location: LanceLocation,
    private readonly connection: lancedb.Connection,
  ) {}

  static async open(location: LanceLocation): Promise<BlobStore> {
    const connection = await lancedb.connect(location.uri, {
      storageOptions: location.storageOptions,
      readConsistencyInterval: location.readConsistencySeconds,
    });
    return new BlobStore(location, connection);
  }

  get uri(): string {
    return this.location.uri;
  }

  /**
   * Writes a new blob from a byte stream, hashing as it goes. Past `maxBytes` the write
   * stops, the partial blob is dropped and `BlobTooLarge` is thrown.
   */
  async write(
    source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    options: { maxBytes?: number } = {},
  ): Promise<StoredBlob> {
    const blobId = randomUUID().replaceAll("-", "");
    const table = await this.connection.createEmptyTable(tableName(blobId), blobSchema());
    const hash = createHash("sha256");
    const limit = options.maxBytes ?? Number.MAX_SAFE_INTEGER;
    let size = 0;
    let seq = 0;
    let pending: Array<{ seq: number; data: Uint8Array }> = [];
    let chunk = Buffer.allocUnsafe(BLOB_CHUNK_BYTES);
    let filled = 0;
    const flush = async () => {
      if (pending.length) await table.add(batchOf(pending));
      collectAfter(pending.reduce((n, row) => n + row.data.byteLength, 0));
      pending = [];
    };
    const closeChunk = async () => {
      pending.push({ seq: seq++, data: chunk.subarray(0, filled) });
      chunk = Buffer.allocUnsafe(BLOB_CHUNK_BYTES);
      filled = 0;
      if (pending.length >= ROWS_PER_ADD) await flush();
    };
    try {
      for await (const piece of source) {
        size += piece.byteLength;
        if (size > limit) throw new BlobTooLarge(limit);
        hash.update(piece);
        for (let offset = 0; offset < piece.byteLength; ) {
          const take = Math.min(BLOB_CHUNK_BYTES - filled, piece.byteLength - offset);
          chunk.set(piece.subarray(offset, offset + take), filled);
          filled += take;
          offset += take;
          if (filled === BLOB_CHUNK_BYTES) await closeChunk();
        }
      }
      if (filled > 0) await closeChunk();
      await flush();
    } catch (error) {
      table.close();
      await this.delete(blobId).catch(() => {});
      throw error;
    }
    table.close();
    return { blobId, size, sha256: hash.digest("hex") };
  }

  /**
   * The bytes `[start, end)` of a blob (default: all of it), read a few rows at a time.
   * `size` is the blob's length as recorded in the metadata.
   */
  read(blobId: string, size: number, range: { start?: number; end?: number } = {}): ReadableStream<Uint8Array> {
    const start = range.start ?? 0;
    const end = Math.min(range.end ?? size, size);
    const rows = this.rows(blobId, start, end);
    return new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          const next = await rows.next();
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        },
        async cancel() {
          await rows.return(undefined);
        },
      },
      { highWaterMark: 1 },
    );
  }

  private async *rows(blobId: string, start: number, end: number): AsyncGenerator<Uint8Array> {
    if (end <= start) return;
    const table = await this.connection.openTable(tableName(checkId(blobId)));
    try {
      const first = Math.floor(start / BLOB_CHUNK_BYTES);
      const last = Math.floor((end - 1) / BLOB_CHUNK_BYTES);
      for (let from = first; from <= last; from += ROWS_PER_READ) {
        const to = Math.min(last, from + ROWS_PER_READ - 1);
        const found = (await table
          .query()
          .where(`seq >= ${from} AND seq <= ${to}`)
          .select(["seq", "data"])
          .toArray()) as Array<{ seq: number; data: Uint8Array }>;
        found.sort((a, b) => a.seq - b.seq);
        if (found.length !== to - from + 1) throw new Error(`blob ${blobId}: rows ${from}..${to} are incomplete`);
        collectAfter(found.reduce((n, row) => n + row.data.byteLength, 0));
        for (const row of found) {
          const rowStart = row.seq * BLOB_CHUNK_BYTES;
          const lo = Math.max(0, start - rowStart);
          const hi = Math.min(row.data.byteLength, end - rowStart);
          // A copy: the Arrow buffer behind `data` holds the whole batch.
          if (hi > lo) yield Uint8Array.prototype.slice.call(row.data, lo, hi);
        }
      }
    } finally {
      table.close();
    }
  }

  /** Removes a blob; a blob already gone is not an error. */
  async delete(blobId: string): Promise<void> {
    try {
      await this.connection.dropTable(tableName(checkId(blobId)));
    } catch (error) {
      if (!/was not found|does not exist|not found/i.test((error as Error).message)) throw error;
    }
  }

  async exists(blobId: string): Promise<boolean> {
    if (!BLOB_ID.test(blobId)) return false;
    try {
      (await this.connection.openTable(tableName(blobId))).close();
      return true;
    } catch {
      return false;
    }
  }

  /** When a blob was last written (ms since the epoch), or null when it does not exist. */
  async writtenAt(blobId: string): Promise<number | null> {
    if (!BLOB_ID.test(blobId)) return null;
    let table: lancedb.Table;
    try {
      table = await this.connection.openTable(tableName(blobId));
    } catch {
      return null;
    }
    try {
      const versions = await table.listVersions();
      // LanceDB reports version times in seconds or milliseconds depending on the build.
      const latest = Math.max(...versions.map((v) => Number(v.timestamp)));
      return latest < 1e12 ? latest * 1000 : latest;
    } finally {
      table.close();
    }
  }

  /** Every blob id present (for backups and the consistency check). */
  async list(): Promise<string[]> {
    const ids: string[] = [];
    for (let start: string | undefined; ; ) {
      const names = await this.connection.tableNames({ startAfter: start, limit: 1000 });
      ids.push(...names.filter((name) => name.startsWith("b_")).map((name) => name.slice(2)));
      if (names.length < 1000) return ids;
      start = names[names.length - 1];
    }
  }

  close(): void {
    this.connection.close();
  }
}

/**
 * Rows as one Arrow table whose `data` column points at the chunks laid end to end in a
 * single buffer (one copy, instead of one per Arrow builder growth step).
 */
function batchOf(rows: Array<{ seq: number; data: Uint8Array }>): ArrowTable {
  const total = rows.reduce((n, row) => n + row.data.byteLength, 0);
  const bytes = new Uint8Array(total);
  const offsets = new Int32Array(rows.length + 1);
  rows.forEach((row, i) => {
    bytes.set(row.data, offsets[i]);
    offsets[i + 1] = offsets[i] + row.data.byteLength;
  });
  const seq = makeData({ type: new Int32(), length: rows.length, data: Int32Array.from(rows, (row) => row.seq) });
  const data = makeData({ type: new Binary(), length: rows.length, valueOffsets: offsets, data: bytes });
  return new ArrowTable(
    new RecordBatch(
      blobSchema(),
      makeData({ type: new Struct(blobSchema().fields), length: rows.length, children: [seq, data] }),
    ),
  );
}

/**
 * Every LanceDB write and read copies each byte a few times (row → Arrow → IPC → native
 * and back), and the collector runs late for large external buffers: a large upload's
 * peak memory grows with its size without help. A full collection every 4 MB (counted
 * across all streams of the process) keeps the peak lowest, at a cost in throughput;
 * wider intervals or an asynchronous collection keep more (bench/files.ts, docs/performance.md#why-the-code-is-tuned-as-it-is).
 */
const GC_EVERY_BYTES = 4 * 1024 * 1024;
let bytesSinceGc = 0;
function collectAfter(bytes: number): void {
  bytesSinceGc += bytes;
  if (bytesSinceGc < GC_EVERY_BYTES) return;
  bytesSinceGc = 0;
  (globalThis as { Bun?: { gc(force: boolean): void } }).Bun?.gc(true);
}

function checkId(blobId: string): string {
  if (!BLOB_ID.test(blobId)) throw new Error(`invalid blob id '${blobId}'`);
  return blobId;
}
