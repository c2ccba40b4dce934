/**
 * What the index writer and the vector-index child process say to each other
 * (src/search/lance/vector-index-build.ts starts the child, vector-index-child.ts beside it is the child). Nothing here
 * imports anything: the CLI entry imports the command name at its top.
 *
 * Request, on the child's stdin: one JSON line of {@link VectorIndexRequest}. Answer, on
 * its stdout: `ok`, or nothing (and its exit code says it failed, its stderr why).
 */

/** The hidden `mnemo` command a compiled binary runs itself with to become the child. */
export const VECTOR_INDEX_CHILD_COMMAND = "__vector-index-child";

export interface VectorIndexRequest {
  /** Where the index lives, as the server reaches it (lance/index-location.ts). */
  location: { uri: string; storageOptions?: Record<string, string> };
  table: string;
  column: string;
  /** HNSW over scalar-quantised vectors, cosine distance. */
  hnsw: { numPartitions: number; m: number; efConstruction: number };
}
