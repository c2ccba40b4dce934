/**
 * What the index writer and the index child process say to each other
 * (src/search/lance/index-child-process.ts starts the child, index-child.ts beside it is the
 * child). Nothing here imports anything: the CLI entry imports the command name at its top.
 *
 * Request, on the child's stdin: one JSON line of {@link IndexChildRequest}. Answer, on its
 * stdout: `ok`, or nothing (and its exit code says it failed, its stderr why).
 */

/** The hidden `mnemo` command a compiled binary runs itself with to become the child. */
export const INDEX_CHILD_COMMAND = "__index-child";

/** Where the index lives, as the server reaches it (search/lance/index-location.ts). */
export interface IndexChildLocation {
  uri: string;
  storageOptions?: Record<string, string>;
}

/** Builds one table's ANN index: HNSW over scalar-quantised vectors, cosine distance. */
export type IndexChildRequest = {
  op: "vector-index";
  location: IndexChildLocation;
  table: string;
  column: string;
  hnsw: { numPartitions: number; m: number; efConstruction: number };
};

/**
 * The hidden `mnemo` command of the index writer's child: a process that stays up while
 * the writer writes, and makes every LanceDB write of the index (src/search/lance/writer-child.ts).
 *
 * Frames both ways. A request: a little-endian u32 header length, a u32 payload length,
 * the header (JSON, {@link WriterChildRequest}), the payload (the rows to add as Arrow IPC
 * in the file format, or nothing). An answer: a u32 length and the JSON of {@link WriterChildAnswer}.
 * The first request is `open`. The server ends a child with `end` (never answered) and then
 * closes its stdin: the child finishes what it was asked and exits. A stdin that closes
 * without `end` means the server died: the child exits at once, leaving what it was doing
 * uncommitted, so that no write of a dead server lands after another replica took the
 * index over and replayed it (which would leave the rows twice).
 */
export const INDEX_WRITER_COMMAND = "__index-writer";

export type WriterChildRequest = { id: number } & (
  | { op: "open"; location: IndexChildLocation }
  | {
      /** Deletes the rows of `deleteKeys` and adds the payload's; creates the table on its first rows, drops it once empty. */
      op: "replace";
      table: string;
      /** `items`: a full-text table (its full-text indices made as needed); a number: a vector table of that dimension. */
      schema: "items" | number;
      deleteKeys: string[];
      /** Whether the table holds context: its context columns need full-text indices too. */
      context: boolean;
      /**
       * The payload's row count when the server keeps the table's row ids: the answer then
       * holds the added rows' ids, addresses and item ids, in the table's order.
       */
      keys?: number;
    }
  | { op: "tidiness"; table: string }
  | {
      /** Compacts tables and brings their indices up to date, removing versions older than `keepMs`. */
      op: "optimize";
      tables: string[];
      keepMs: number;
    }
  | {
      /**
       * Tables that exist but cannot be read, each with its error (damaged-tables.ts),
       * through a connection of its own: LanceDB keeps memory for every table a process
       * opens, so the check opens them here and the server asks a new child afterwards.
       */
      op: "check";
    }
  | { op: "end" }
);

/** The rows a `replace` with `keys` added, column by column, in the table's order. */
export interface AddedRows {
  rowIds: number[];
  addresses: number[];
  itemIds: string[];
}

export type WriterChildAnswer = { id: number } & (
  | {
      ok: true;
      created?: boolean;
      dropped?: boolean;
      tidiness?: { fragments: number; unindexedRows: number } | null;
      /** The added rows (see `keys` above): the server checks them against the rows it sent. */
      added?: AddedRows;
      /** A `check`'s unreadable tables, in name order. */
      damaged?: Array<{ name: string; reason: string }>;
    }
  | { ok: false; error: string }
);
