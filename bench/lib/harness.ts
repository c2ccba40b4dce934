/**
 * Starts Mnemo for a bench, in a child process (default: the client's own work does not
 * share the server's event loop, and RSS is the server's alone) or in this process.
 * Either way the bench talks HTTP to `url` and calls `ops` for index state and timings.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import type { Ops } from "./server-ops";

type Promised<T> = {
  [K in keyof T]: T[K] extends (...a: infer A) => infer R ? (...a: A) => Promise<Awaited<R>> : never;
};

export interface BenchServer {
  url: string;
  /** "child process (pid N)" or "in-process". */
  where: string;
  /** The server's process id (the bench's own when in-process). */
  pid: number;
  ops: Promised<Ops>;
  stop(): Promise<void>;
}

const tempDirs = new Set<string>();
const children = new Set<Subprocess>();

/** A fresh temp dir, removed by `cleanup()` (also on SIGINT/SIGTERM). */
export function tempDir(prefix = "mnemo-bench-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

/** Bytes of the files under `dir`, recursively. */
export function diskBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = statSync(path);
    total += stat.isDirectory() ? diskBytes(path) : stat.size;
  }
  return total;
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/** Synchronous last-resort undo steps (e.g. dropping a bench database) for `cleanup()`. */
const cleanupHooks = new Set<() => void>();

/** Runs `undo` at `cleanup()` unless the returned function is called first (the normal path). */
export function onCleanup(undo: () => void): () => void {
  cleanupHooks.add(undo);
  return () => void cleanupHooks.delete(undo);
}

/** Registers a process this bench spawned itself, so `cleanup()` kills it (by its own pid). */
export function trackChild(child: Subprocess): void {
  children.add(child);
  void child.exited.then(() => children.delete(child));
}

/** Kills leftover children (by their own pid), runs pending undo steps, removes temp dirs. */
export function cleanup(): void {
  for (const child of children) child.kill();
  children.clear();
  for (const undo of cleanupHooks) {
    try {
      undo();
    } catch {
      // best effort: the bench is exiting anyway
    }
  }
  cleanupHooks.clear();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

/** A bench stops by itself: after `minutes` it gives up, cleans up and exits non-zero. */
export function giveUpAfter(minutes: number, name: string): void {
  setTimeout(() => {
    console.error(`${name}: gave up after ${minutes} minutes (a server call never answered?)`);
    cleanup();
    process.exit(1);
  }, minutes * 60_000).unref();
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    cleanup();
    process.exit(130);
  });
}

/**
 * `MNEMO_BENCH_CPU_PROF=DIR`: each server a bench starts writes a CPU profile there, as
 * Markdown, when it exits (Bun's `--cpu-prof-md`).
 */
export const profiling = () =>
  process.env.MNEMO_BENCH_CPU_PROF ? ["--cpu-prof-md", `--cpu-prof-dir=${process.env.MNEMO_BENCH_CPU_PROF}`] : [];

/** Spawns a Bun child speaking the small IPC protocol of server-child.ts. */
function spawnChild(script: string, env: Record<string, string>) {
  let next = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let onReady: (message: { type: string; url?: string; error?: string; pid?: number }) => void = () => {};
  const ready = new Promise<{ url: string; pid: number }>((resolve, reject) => {
    onReady = (m) => (m.type === "ready" ? resolve({ url: m.url!, pid: m.pid! }) : reject(new Error(m.error)));
  });
  const child = Bun.spawn([process.execPath, ...profiling(), join(import.meta.dir, script)], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "inherit", "inherit"],
    ipc(message: { id?: number; type?: string; result?: unknown; error?: string }) {
      if (message.type) return onReady(message as never);
      const call = pending.get(message.id!);
      pending.delete(message.id!);
      if (message.error) call?.reject(new Error(message.error));
      else call?.resolve(message.result);
    },
  });
  children.add(child);
  void child.exited.then((code) => {
    children.delete(child);
    onReady({ type: "failed", error: `${script} exited with code ${code} before it was ready` });
    for (const call of pending.values()) call.reject(new Error(`${script} exited with code ${code}`));
    pending.clear();
  });
  const call = (op: string, args: unknown[]) =>
    new Promise<unknown>((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      child.send({ id, op, args });
    });
  return { child, ready, call };
}

/** Env for the fake-embedder mode: the openai provider pointed at `url`, 384-d. */
export const fakeEmbedderEnv = (url: string) => ({
  EMBEDDINGS_PROVIDER: "openai",
  EMBEDDINGS_URL: url,
  EMBEDDINGS_MODEL: "fake",
});

export async function startBenchServer(options: {
  dataDir: string;
  env: Record<string, string>;
  inProcess?: boolean;
}): Promise<BenchServer> {
  if (options.inProcess) {
    const [{ loadConfig }, { startServer }, { createCountingLogger, createOps }] = await Promise.all([
      import("../../src/config"),
      import("../../src/server"),
      import("./server-ops"),
    ]);
    const log = createCountingLogger();
    const config = loadConfig(
      { dataDir: options.dataDir, port: 0, allowMockTokens: true, logLevel: "warn" },
      options.env,
    );
    const server = await startServer(config, { log });
    const ops = createOps(server, log);
    const promised = Object.fromEntries(
      Object.entries(ops).map(([k, fn]) => [k, async (...a: unknown[]) => (fn as (...x: unknown[]) => unknown)(...a)]),
    );
    return {
      url: server.url,
      where: "in-process",
      pid: process.pid,
      ops: promised as Promised<Ops>,
      stop: () => server.stop(),
    };
  }
  const { child, ready, call } = spawnChild("server-child.ts", {
    MNEMO_BENCH_SERVER: JSON.stringify({ dataDir: options.dataDir, env: options.env }),
  });
  const { url, pid } = await ready;
  const ops = new Proxy(
    {},
    {
      get:
        (_, op: string) =>
        (...args: unknown[]) =>
          call(op, args),
    },
  ) as Promised<Ops>;
  return {
    url,
    where: `child process (pid ${pid})`,
    pid,
    ops,
    async stop() {
      await call("stop", []).catch(() => {});
      await child.exited;
    },
  };
}

/** The tests' fake embedder in its own process; `url` ends in /v1. */
export async function startFakeEmbedderProcess(dimension = 384): Promise<{ url: string; stop(): Promise<void> }> {
  const { child, ready } = spawnChild("fake-embedder-child.ts", { MNEMO_BENCH_DIMENSION: String(dimension) });
  const { url } = await ready;
  return {
    url,
    async stop() {
      child.send({ op: "stop" });
      await child.exited;
    },
  };
}
