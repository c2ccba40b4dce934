/**
 * The index child process: reads one request on stdin, builds a table's ANN index, answers
 * `ok`, exits (protocol in src/shared/index-child-protocol.ts). LanceDB's HNSW build keeps
 * every thread of its runtime busy for seconds, and a search in the same process waited
 * behind it for as long (`bun bench/backlog.ts`). In a process of its own, at a lower
 * priority, the OS shares the cores between this work and the server's searches and
 * writes. (Compactions run in the writer's child: writer-child.ts.)
 *
 * Started as `bun src/search/lance/index-child.ts` from a checkout, and as
 * `mnemo __index-child` from the compiled binary (a binary runs only its main entry).
 */
import { runAsChildMain } from "../../lib/child-command";
import type { IndexChildRequest } from "../../shared/index-child-protocol";

/** Bytes of a request beyond which the child refuses it (a request names one table). */
const MAX_REQUEST_BYTES = 1024 * 1024;
/** How often the child looks whether the server that started it is still there. */
const PARENT_CHECK_MS = 250;

/**
 * Ends the child as soon as the server that started it is gone (killed: the child then
 * belongs to another parent). An ANN build left uncommitted changes nothing the index
 * holds; the next server does its own. Without this, an orphan kept the machine busy for
 * the rest of its work, beside the server that replaced its own.
 */
function endWithParent(): void {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.exit(0);
  }, PARENT_CHECK_MS).unref();
}

export async function runIndexChild(): Promise<void> {
  endWithParent();
  let raw = "";
  for await (const chunk of Bun.stdin.stream()) {
    raw += new TextDecoder().decode(chunk);
    if (raw.length > MAX_REQUEST_BYTES) throw new Error("index child request: too large");
  }
  const request = JSON.parse(raw) as IndexChildRequest;
  const lancedb = await import("@lancedb/lancedb");
  const db = await lancedb.connect(request.location.uri, { storageOptions: request.location.storageOptions });
  try {
    const table = await db.openTable(request.table);
    try {
      await table.createIndex(request.column, {
        replace: true,
        config: lancedb.Index.hnswSq({ distanceType: "cosine", ...request.hnsw }),
      });
    } finally {
      table.close();
    }
  } finally {
    db.close();
  }
  process.stdout.write("ok\n");
}

if (import.meta.main) await runAsChildMain(runIndexChild);
