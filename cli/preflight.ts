import { accessSync, constants, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { CliError } from "./output";

/**
 * Checks a command can run before it creates anything: a refused start leaves no data
 * dir, store or master key behind, and says what to fix in one line.
 */

/** The nearest path at or above `path` that exists, with what it is. */
function nearestExisting(path: string): { path: string; isDirectory: boolean } {
  for (let current = resolve(path); ; current = dirname(current)) {
    try {
      return { path: current, isDirectory: statSync(current).isDirectory() };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== "ENOENT" && code !== "ENOTDIR") || dirname(current) === current) throw error;
    }
  }
}

/** Null when this user may write in `path`; else why not, in words. */
function notWritable(path: string): string | null {
  try {
    accessSync(path, constants.W_OK);
    return null;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EROFS"
      ? "is on a read-only file system"
      : "is not writable by this user";
  }
}

/**
 * The data dir exists as a writable directory, or can be created: its nearest existing
 * parent is a writable directory. `source` names where the dir came from (`--data`).
 */
export function checkDataDir(dir: string, source = "--data / MNEMO_DATA_DIR"): void {
  const found = nearestExisting(dir);
  const itself = found.path === resolve(dir);
  if (!found.isDirectory) {
    const what = itself ? "is a file, not a directory" : `cannot be created: ${found.path} is a file, not a directory`;
    throw new CliError(`data dir ${dir} ${what}; choose another with ${source}`);
  }
  const problem = notWritable(found.path);
  if (problem) {
    const what = itself ? problem : `cannot be created: ${found.path} ${problem}`;
    throw new CliError(`data dir ${dir} ${what}; fix the permissions or choose another with ${source}`);
  }
}

/** A file the command will write: its folder exists and is writable, and the path is not a folder. */
export function checkOutputFile(path: string, option: string): void {
  const folder = dirname(resolve(path));
  let folderIsDirectory: boolean;
  try {
    folderIsDirectory = statSync(folder).isDirectory();
  } catch {
    throw new CliError(`${option} ${path}: the folder ${folder} does not exist`);
  }
  if (!folderIsDirectory) throw new CliError(`${option} ${path}: ${folder} is a file, not a folder`);
  const problem = notWritable(folder);
  if (problem) throw new CliError(`${option} ${path}: the folder ${folder} ${problem}`);
  let target: ReturnType<typeof statSync> | undefined;
  try {
    target = statSync(path);
  } catch {
    target = undefined;
  }
  if (target?.isDirectory()) throw new CliError(`${option} ${path}: is a folder; give a file name`);
}

/**
 * The port is free on the host (port 0 always is): binds and releases it, so a port in use
 * is reported before any store is opened or created.
 */
export function checkPortFree(host: string, port: number, source = "--port / MNEMO_PORT"): void {
  if (port === 0) return;
  let listener: { stop(closeActiveConnections?: boolean): void } | undefined;
  try {
    listener = Bun.listen({ hostname: host, port, socket: { data() {} } });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE")
      throw new CliError(
        `cannot listen on ${host}:${port}: the port is in use; stop what listens there or choose another with ${source}`,
      );
    if (code === "EADDRNOTAVAIL")
      throw new CliError(
        `cannot listen on ${host}:${port}: ${host} is not an address of this machine; choose another with --host / MNEMO_HOST`,
      );
    if (code === "EACCES")
      throw new CliError(
        `cannot listen on ${host}:${port}: permission denied (ports below 1024 need privileges); choose another with ${source}`,
      );
    throw error;
  } finally {
    listener?.stop(true);
  }
}
