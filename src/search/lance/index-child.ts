/**
 * The index child process: reads one request on stdin, builds a table's ANN index or
 * compacts tables, answers `ok`, exits (protocol in src/shared/index-child-protocol.ts).
 * LanceDB's HNSW build and its compaction keep every thread of its runtime busy (seconds for
 * a build), and a search in the same process waited behind them for as long
 * (`bun bench/backlog.ts`); LanceDB also keeps native memory for each full-text index update
 * on the connection that made it (`bun bench/lance-fts-leak.ts`). In a process of its own
 * the OS shares the cores between this work and the server's searches, and takes the
 * memory back when it ends.
 *
 * Started as `bun src/search/lance/index-child.ts` from a checkout, and as
 * `mnemo __index-child` from the compiled binary (a binary runs only its main entry).
 */
import { runAsChildMain } from "../../lib/child-command";
import type { IndexChildRequest } from "../../shared/index-child-protocol";

/** Bytes of a request beyond which the child refuses it (a request names at most a batch of tables). */
const MAX_REQUEST_BYTES = 1024 * 1024;
/** How often the child looks whether the server that started it is still there. */
const PARENT_CHECK_MS = 250;

/**
 * Ends the child as soon as the server that started it is gone (killed: the child then
 * belongs to another parent). A compaction or an ANN build left uncommitted changes
 * nothing the index holds; the next server does its own. Without this, an orphan kept the
 * machine busy for the rest of its work, beside the server that replaced its own.
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
    if (request.op === "vector-index") {
      const table = await db.openTable(request.table);
      try {
        await table.createIndex(request.column, {
          replace: true,
          config: lancedb.Index.hnswSq({ distanceType: "cosine", ...request.hnsw }),
        });
      } finally {
        table.close();
      }
    } else {
      const cleanupOlderThan = new Date(Date.now() - request.keepMs);
      for (const name of request.tables) {
        const table = await db.openTable(name).catch((error: Error) => {
          // A table dropped since it was named (its owner deleted everything) has nothing to compact.
          if (/not found/i.test(error.message)) return null;
          throw error;
        });
        if (!table) continue;
        try {
          await table.optimize({ cleanupOlderThan });
        } finally {
          table.close();
        }
      }
    }
  } finally {
    db.close();
  }
  process.stdout.write("ok\n");
}

if (import.meta.main) await runAsChildMain(runIndexChild);
