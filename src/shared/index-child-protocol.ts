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

export type IndexChildRequest =
  | {
      /** Builds one table's ANN index: HNSW over scalar-quantised vectors, cosine distance. */
      op: "vector-index";
      location: IndexChildLocation;
      table: string;
      column: string;
      hnsw: { numPartitions: number; m: number; efConstruction: number };
    }
  | {
      /** Compacts tables and brings their indices up to date, removing versions older than `keepMs`. */
      op: "optimize";
      location: IndexChildLocation;
      tables: string[];
      keepMs: number;
    };
