import { Field } from "apache-arrow/fb/field";
import { FloatingPoint } from "apache-arrow/fb/floating-point";
import { Int } from "apache-arrow/fb/int";
import { Footer } from "apache-arrow/fb/footer";
import { Message } from "apache-arrow/fb/message";
import { MessageHeader } from "apache-arrow/fb/message-header";
import { Precision } from "apache-arrow/fb/precision";
import { RecordBatch } from "apache-arrow/fb/record-batch";
import type { Schema } from "apache-arrow/fb/schema";
import { Type } from "apache-arrow/fb/type";
import { ByteBuffer } from "flatbuffers";

/**
 * Numeric columns of a LanceDB query's result, read straight from the Arrow IPC bytes the
 * native query hands over. The SDK's `toArray` parses each result through apache-arrow's
 * generic IPC reader and builds a proxy object per row: for a full-text search returning
 * addresses and scores that cost more than the reading itself (docs/performance.md#why-the-code-is-tuned-as-it-is).
 * Here the footer and batch header are read with Arrow's own flatbuffer classes and the
 * values straight from the body with a DataView.
 *
 * Only what this needs is understood: uncompressed batches of non-null unsigned 64-bit
 * integer and 32-bit float columns. Anything else (and a query object without the native
 * hook) returns null and the caller reads the result the SDK's way.
 *
 * Reading stops as soon as `limit` rows are in hand: a query with a limit cannot return
 * more, and asking the stream for its end costs one more round trip to LanceDB's threads.
 */
export type Column = Float64Array;

interface NativeStream {
  next(): Promise<Uint8Array | Buffer | null | undefined>;
}

const CONTINUATION = 0xffffffff;
/** "ARROW1", at both ends of an IPC file. */
const FILE_MAGIC = [0x41, 0x52, 0x52, 0x4f, 0x57, 0x31];

export async function numericColumns(query: object, names: readonly string[], limit: number): Promise<Column[] | null> {
  const execute = (query as unknown as { nativeExecute?: () => Promise<NativeStream> }).nativeExecute;
  if (typeof execute !== "function") return null;
  const stream = await execute.call(query);
  const parts: Column[][] = [];
  let rows = 0;
  while (rows < limit) {
    const bytes = await stream.next();
    if (!bytes) break;
    const batch = decodeBatch(bytes, names);
    if (!batch) return null;
    parts.push(batch.columns);
    rows += batch.rows;
  }
  return names.map((_, c) =>
    concat(
      parts.map((p) => p[c]),
      rows,
    ),
  );
}

function concat(parts: Column[], rows: number): Column {
  if (parts.length === 1) return parts[0];
  const out = new Float64Array(rows);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

type Kind = "u64" | "f32";

/**
 * One IPC file (LanceDB sends one per batch): the footer at its end gives the schema and
 * where each record batch's header and body are; at most one batch is expected.
 */
function decodeBatch(bytes: Uint8Array, names: readonly string[]): { rows: number; columns: Column[] } | null {
  const size = bytes.byteLength;
  if (size < 18 || !FILE_MAGIC.every((byte, i) => bytes[i] === byte && bytes[size - 6 + i] === byte)) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, size);
  const footerLength = view.getInt32(size - 10, true);
  if (footerLength <= 0 || footerLength > size - 18) return null;
  const footer = Footer.getRootAsFooter(new ByteBuffer(bytes.subarray(size - 10 - footerLength, size - 10)));
  const schema = footer.schema();
  const found = schema && readSchema(schema, names);
  if (!found) return null;
  const batches = footer.recordBatchesLength();
  if (batches === 0) return { rows: 0, columns: names.map(() => new Float64Array(0)) };
  if (batches > 1) return null;
  const block = footer.recordBatches(0)!;
  let at = Number(block.offset());
  const metaLength = block.metaDataLength();
  const body = at + metaLength;
  // The header is prefixed by its length, itself after a 0xFFFFFFFF continuation marker.
  if (view.getUint32(at, true) === CONTINUATION) at += 4;
  const headerLength = view.getInt32(at, true);
  const message = Message.getRootAsMessage(new ByteBuffer(bytes.subarray(at + 4, at + 4 + headerLength)));
  if (message.headerType() !== MessageHeader.RecordBatch) return null;
  const batch = message.header(new RecordBatch()) as RecordBatch;
  if (batch.compression()) return null;
  const rows = Number(batch.length());
  const columns: Column[] = [];
  for (let c = 0; c < names.length; c++) {
    const field = found.positions[c];
    const node = batch.nodes(field);
    if (!node || Number(node.nullCount()) !== 0 || Number(node.length()) !== rows) return null;
    // Two buffers per primitive column: validity, then values.
    const values = batch.buffers(field * 2 + 1);
    const width = found.kinds[c] === "u64" ? 8 : 4;
    if (!values || Number(values.length()) < rows * width) return null;
    const offset = body + Number(values.offset());
    if (offset + rows * width > size) return null;
    columns.push(readValues(view, offset, rows, found.kinds[c]));
  }
  return { rows, columns };
}

/** The kind and position of each wanted column, or null when one is missing or not a plain number column. */
function readSchema(schema: Schema, names: readonly string[]): { kinds: Kind[]; positions: number[] } | null {
  const byName = new Map<string, { position: number; kind: Kind | null }>();
  for (let i = 0; i < schema.fieldsLength(); i++) {
    const field = schema.fields(i, new Field())!;
    if (field.childrenLength() > 0) return null; // nested columns shift the buffer count
    byName.set(field.name() ?? "", { position: i, kind: kindOf(field) });
  }
  const kinds: Kind[] = [];
  const positions: number[] = [];
  for (const name of names) {
    const found = byName.get(name);
    if (!found?.kind) return null;
    kinds.push(found.kind);
    positions.push(found.position);
  }
  // Every column before a wanted one must have exactly two buffers (a primitive).
  if (byName.size !== [...byName.values()].filter((f) => f.kind).length) return null;
  return { kinds, positions };
}

function kindOf(field: Field): Kind | null {
  if (field.typeType() === Type.Int) {
    const int = field.type(new Int()) as Int;
    return int.bitWidth() === 64 && !int.isSigned() ? "u64" : null;
  }
  if (field.typeType() === Type.FloatingPoint) {
    return (field.type(new FloatingPoint()) as FloatingPoint).precision() === Precision.SINGLE ? "f32" : null;
  }
  return null;
}

function readValues(view: DataView, offset: number, rows: number, kind: Kind): Column {
  const out = new Float64Array(rows);
  if (kind === "u64") for (let i = 0; i < rows; i++) out[i] = Number(view.getBigUint64(offset + i * 8, true));
  else for (let i = 0; i < rows; i++) out[i] = view.getFloat32(offset + i * 4, true);
  return out;
}
