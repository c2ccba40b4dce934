/**
 * Mnemo as a child process (`bun cli/mnemo.ts serve --port 0`), as an operator runs it, so
 * it can be killed with SIGKILL mid-write. Everything it prints is kept in LOGS, which
 * the secrets check scans.
 */
import { join } from "node:path";
import type { Subprocess } from "bun";

const ROOT = join(import.meta.dir, "..", "..", "..");
const CLI = join(ROOT, "cli", "mnemo.ts");

/** Every line any child server printed during this test file. */
export const LOGS: string[] = [];

const children = new Set<Subprocess>();

export interface ChildServer {
  url: string;
  proc: Subprocess;
  /** This child's output so far (stdout and stderr). */
  output(): string;
  kill(signal?: "SIGKILL" | "SIGTERM"): Promise<number>;
}

/** The environment of a child: nothing of the developer's but PATH and HOME. */
export function childEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
    MNEMO_DATA_DIR: dataDir,
    EMBEDDINGS_PROVIDER: "none",
    MNEMO_LOG_LEVEL: "debug",
    // PostgreSQL storage requires a master key shared by every replica.
    ...(extra.MNEMO_DATABASE_URL ? { SERVER_MASTER_KEY: TEST_MASTER_KEY } : {}),
    ...extra,
  };
}

/** A fixed master key for test servers on PostgreSQL (test data only). */
export const TEST_MASTER_KEY = "7e".repeat(32);

/** Runs a CLI command to completion (e.g. a server expected to refuse to start). */
export async function runCli(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn([process.execPath, CLI, ...args], { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
  children.add(proc);
  const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  children.delete(proc);
  LOGS.push(stdout, stderr);
  return { code, stdout, stderr };
}

/** Starts `mnemo serve` on a free port and waits for its "listening on" line. */
export async function startChild(
  dataDir: string,
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<ChildServer> {
  const proc = Bun.spawn([process.execPath, CLI, "serve", "--port", "0", "--data", dataDir, "--allow-mock-tokens"], {
    cwd: ROOT,
    env,
    stdout: "pipe",
    stderr: "pipe",
  });
  children.add(proc);
  let out = "";
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true });
      out += text;
      LOGS.push(text);
    }
  };
  void collect(proc.stdout as ReadableStream<Uint8Array>);
  void collect(proc.stderr as ReadableStream<Uint8Array>);
  const started = Date.now();
  while (!/listening on (\S+)/.test(out)) {
    if (proc.exitCode !== null || proc.signalCode)
      throw new Error(`server exited (${proc.exitCode ?? proc.signalCode}) before listening:\n${out.slice(-2000)}`);
    if (Date.now() - started > timeoutMs) {
      proc.kill("SIGKILL");
      throw new Error(`server did not listen within ${timeoutMs} ms:\n${out.slice(-2000)}`);
    }
    await Bun.sleep(20);
  }
  const url = /listening on (\S+)/.exec(out)![1];
  return {
    url,
    proc,
    output: () => out,
    async kill(signal = "SIGKILL") {
      proc.kill(signal);
      const code = await proc.exited;
      children.delete(proc);
      return code;
    },
  };
}

/** Kills every child still running (after a failed assertion), by its own pid. */
export function killChildren(): void {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  children.clear();
}
