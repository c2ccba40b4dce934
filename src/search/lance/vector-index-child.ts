/**
 * The vector-index child process: reads one request on stdin, builds one table's ANN index,
 * answers `ok`, exits (protocol in src/shared/vector-index-protocol.ts). LanceDB's HNSW build keeps
 * every thread of its runtime busy for seconds, and a search in the same process waits
 * behind it for as long (`bun bench/backlog.ts`); in a process of its own the OS shares the
 * cores between the build and the server's searches.
 *
 * Started as `bun src/search/lance/vector-index-child.ts` from a checkout, and as
 * `mnemo __vector-index-child` from the compiled binary (a binary runs only its main entry).
 */
import type { VectorIndexRequest } from "../../shared/vector-index-protocol";

/** Bytes of a request beyond which the child refuses it (a request is a few hundred). */
const MAX_REQUEST_BYTES = 64 * 1024;

export async function runVectorIndexChild(): Promise<void> {
  let raw = "";
  for await (const chunk of Bun.stdin.stream()) {
    raw += new TextDecoder().decode(chunk);
    if (raw.length > MAX_REQUEST_BYTES) throw new Error("vector index request: too large");
  }
  const request = JSON.parse(raw) as VectorIndexRequest;
  const lancedb = await import("@lancedb/lancedb");
  const db = await lancedb.connect(request.location.uri, { storageOptions: request.location.storageOptions });
  const table = await db.openTable(request.table);
  try {
    await table.createIndex(request.column, {
      replace: true,
      config: lancedb.Index.hnswSq({ distanceType: "cosine", ...request.hnsw }),
    });
  } finally {
    table.close();
    db.close();
  }
  process.stdout.write("ok\n");
}

if (import.meta.main) {
  try {
    await runVectorIndexChild();
    process.exit(0);
  } catch (error) {
    process.stderr.write(`${(error as Error).message.split("\n")[0].slice(0, 500)}\n`);
    process.exit(1);
  }
}
