import {
  FixedSizeList,
  Float16,
  Float32,
  makeData,
  RecordBatch,
  Struct,
  Table,
  vectorFromArray,
  type Schema,
} from "apache-arrow";

/** Rows converted at a time; the event loop turns between slices. */
const SLICE_ROWS = 256;

/**
 * Rows as one Arrow table for LanceDB's `add` (one commit), built column by column in
 * slices of SLICE_ROWS rows with a turn of the event loop between slices. LanceDB's own
 * conversion of row objects holds the one JavaScript thread for the whole batch (about
 * 50 ms for 4,096 rows with their word vectors), and every search waits behind it; here
 * the longest hold is one slice's, and a vector column is copied into one typed array per
 * slice, of the column's own float width (half floats: lance-schema.ts), rather than
 * converted number by number (docs/performance.md#why-the-code-is-tuned-as-it-is).
 */
export async function rowsTable(schema: Schema, rows: readonly object[]): Promise<Table> {
  const batches: RecordBatch[] = [];
  for (let start = 0; start < rows.length; start += SLICE_ROWS) {
    if (start > 0) await new Promise((resolve) => setImmediate(resolve));
    batches.push(slice(schema, rows.slice(start, start + SLICE_ROWS)));
  }
  return new Table(schema, batches);
}

function slice(schema: Schema, slice: readonly object[]): RecordBatch {
  const rows = slice as ReadonlyArray<Record<string, unknown>>;
  const length = rows.length;
  const children = schema.fields.map((field) => {
    if (!(field.type instanceof FixedSizeList))
      return vectorFromArray(
        rows.map((row) => row[field.name]),
        field.type,
      ).data[0];
    const dims = field.type.listSize;
    const half = field.type.valueType instanceof Float16;
    const values = half ? new Float16Array(length * dims) : new Float32Array(length * dims);
    rows.forEach((row, i) => {
      const vector = row[field.name] as ArrayLike<number> | undefined;
      if (!vector || vector.length !== dims) throw new Error(`index row without a ${dims}-dimension '${field.name}'`);
      values.set(vector, i * dims);
    });
    // Arrow's half floats are their 16-bit patterns.
    const child = half
      ? makeData({ type: new Float16(), length: values.length, nullCount: 0, data: new Uint16Array(values.buffer) })
      : makeData({ type: new Float32(), length: values.length, nullCount: 0, data: values as Float32Array });
    return makeData({ type: field.type, length, nullCount: 0, child });
  });
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length, nullCount: 0, children }));
}
