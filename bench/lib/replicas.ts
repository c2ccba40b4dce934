/**
 * `mnemo serve` replicas for the backend comparison: real CLI subprocesses, as deployed,
 * sharing one PostgreSQL database and one index directory. Their output is forwarded to
 * stderr with a prefix (and always read, so a full pipe never stalls a server).
 */
import * as lancedb from "@lancedb/lancedb";
import { join } from "node:path";
import { profiling, trackChild } from "./harness";

const ROOT = join(import.meta.dir, "..", "..");

export interface ReplicaHealth {
  store: string;
  index: { uri: string; writer: boolean; replicaId: string; writerId: string | null };
}

export interface Replica {
  name: string;
  url: string;
  pid: number;
  health(): Promise<ReplicaHealth>;
  /** SIGTERM (the server drains and releases its lease), SIGKILL after 20 s. */
  stop(): Promise<void>;
}

/** Forwards a stream line by line to stderr; resolves with everything read once `until` matches. */
function forward(stream: ReadableStream<Uint8Array>, prefix: string, until?: RegExp): Promise<string> {
  const decoder = new TextDecoder();
  let seen = "";
  let partial = "";
  return new Promise((resolve, reject) => {
    let found = !until;
    if (found) resolve("");
    void (async () => {
      for await (const chunk of stream) {
        const text = decoder.decode(chunk, { stream: true });
        if (!found) {
          seen += text;
          if (until!.test(seen)) {
            found = true;
            resolve(seen);
          }
        }
        partial += text;
        const lines = partial.split("\n");
        partial = lines.pop()!;
        for (const line of lines) if (line.trim() && !until?.test(line)) process.stderr.write(`${prefix} ${line}\n`);
      }
      if (partial.trim()) process.stderr.write(`${prefix} ${partial}\n`);
      if (!found) reject(new Error(`exited before printing ${until}`));
    })().catch(reject);
  });
}

/** The index writer's knobs (`MNEMO_INDEX_*`) set for the bench reach its servers: experiments without code changes. */
const indexTuning = () =>
  Object.fromEntries(Object.entries(process.env).filter(([key]) => key.startsWith("MNEMO_INDEX_"))) as Record<
    string,
    string
  >;
/** Starts `bun cli/mnemo.ts serve --port 0 --data DIR --allow-mock-tokens` and waits for its URL. */
export async function spawnReplica(name: string, dataDir: string, env: Record<string, string>): Promise<Replica> {
  const proc = Bun.spawn(
    [
      process.execPath,
      ...profiling(),
      join(ROOT, "cli", "mnemo.ts"),
      "serve",
      "--port",
      "0",
      "--data",
      dataDir,
      "--allow-mock-tokens",
    ],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        EMBEDDINGS_PROVIDER: "none",
        MNEMO_LOG_LEVEL: "warn",
        ...indexTuning(),
        ...env,
      },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  trackChild(proc);
  const prefix = `[replica ${name}]`;
  void forward(proc.stderr, prefix).catch(() => {});
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`replica ${name} did not print its URL within 60 s`)), 60_000);
  });
  let printed: string;
  try {
    printed = await Promise.race([forward(proc.stdout, prefix, /listening on (\S+)/), timeout]);
  } catch (error) {
    proc.kill("SIGKILL");
    throw new Error(`replica ${name}: ${(error as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
  const url = /listening on (\S+)/.exec(printed)![1];
  return {
    name,
    url,
    pid: proc.pid,
    async health() {
      // The index's details need a token (any valid one); replicas run with mock tokens.
      const response = await fetch(`${url}/health`, { headers: { authorization: "Bearer mock-token-bench" } });
      if (!response.ok) throw new Error(`replica ${name}: GET /health → ${response.status}`);
      return (await response.json()) as ReplicaHealth;
    },
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill("SIGTERM");
      const killer = setTimeout(() => proc.kill("SIGKILL"), 20_000);
      await proc.exited;
      clearTimeout(killer);
    },
  };
}

/**
 * Waits until the index writer's idle optimize has folded every row into the indices of
 * every table (what `settle()` forces in a single bench server), reading the shared index
 * directory itself; any table layout (one `items` table, or a table per owner).
 * Returns the milliseconds waited, or null at the deadline.
 */
export async function waitForOptimizedIndex(indexDir: string, rows: number, timeoutMs: number): Promise<number | null> {
  const start = performance.now();
  const db = await lancedb.connect(indexDir, { readConsistencyInterval: 0 });
  try {
    while (performance.now() - start < timeoutMs) {
      let total = 0;
      let unindexed = 0;
      let indices = 0;
      for (const name of await db.tableNames()) {
        const table = await db.openTable(name).catch(() => null);
        if (!table) continue;
        try {
          total += await table.countRows();
          for (const index of await table.listIndices()) {
            indices++;
            unindexed += (await table.indexStats(index.name))?.numUnindexedRows ?? 0;
          }
        } finally {
          table.close();
        }
      }
      if (indices && unindexed === 0 && total >= rows) return performance.now() - start;
      await Bun.sleep(250);
    }
    return null;
  } finally {
    db.close();
  }
}
