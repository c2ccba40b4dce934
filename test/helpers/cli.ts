import { afterAll } from "bun:test";
import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { databaseEnvFor, dropDatabaseFor } from "./database";
import { tempDir } from "./server";

const ROOT = join(import.meta.dir, "..", "..");

/** In the PostgreSQL run, a command naming `--data DIR` uses that dir's own database. */
async function databaseEnvForArgs(args: string[]): Promise<Record<string, string>> {
  const at = args.indexOf("--data");
  return at >= 0 && args[at + 1] ? databaseEnvFor(resolve(args[at + 1])) : {};
}

/** Runs `mnemo …` as a subprocess; returns exit code, stdout and stderr together. */
export async function runCli(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn([process.execPath, join(ROOT, "cli", "mnemo.ts"), ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      EMBEDDINGS_PROVIDER: "none",
      ...(await databaseEnvForArgs(args)),
      ...env,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { exitCode, stdout, stderr };
}

const spawned = new Set<Bun.Subprocess>();

/**
 * Kills every server `spawnServer` started that is still running. Register it with
 * `afterEach` so a failing assertion never leaves a server behind.
 */
export function killSpawnedServers(): void {
  for (const proc of spawned) if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
  spawned.clear();
}

/** Starts `mnemo serve` as a subprocess and resolves once it prints its URL. */
export async function spawnServer(
  args: string[],
  env: Record<string, string> = {},
  options: { bunArgs?: string[] } = {},
) {
  const proc = Bun.spawn(
    [process.execPath, ...(options.bunArgs ?? []), join(ROOT, "cli", "mnemo.ts"), "serve", "--port", "0", ...args],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        EMBEDDINGS_PROVIDER: "none",
        MNEMO_LOG_LEVEL: "warn",
        ...(await databaseEnvForArgs(args)),
        ...env,
      },
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  spawned.add(proc);
  const reader = proc.stdout.getReader();
  let buffered = "";
  while (!/listening on (\S+)/.test(buffered)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server exited before listening: ${await new Response(proc.stderr).text()}`);
    buffered += new TextDecoder().decode(value);
  }
  const url = /listening on (\S+)/.exec(buffered)![1];
  reader.releaseLock();
  return { proc, url, stderr: () => new Response(proc.stderr).text() };
}

/**
 * Data dirs of one CLI test file under one temp root: `dataDir(name)` names a fresh one.
 * After the file the root is removed and each dir's PostgreSQL database dropped.
 */
export function cliDataDirs(prefix: string) {
  const root = tempDir(prefix);
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await dropDatabaseFor(dir);
    rmSync(root, { recursive: true, force: true });
  });
  return {
    root,
    dataDir(name: string): string {
      const dir = join(root, name);
      dirs.push(dir);
      return dir;
    },
  };
}
