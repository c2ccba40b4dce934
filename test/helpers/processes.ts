import { readFileSync } from "node:fs";

/**
 * A process's state letter and parent pid from `/proc/<pid>/stat`, or null once it is gone
 * (the command name, in parentheses, may hold spaces: the fields are read after its end).
 */
export function processStat(pid: number | string): { state: string; ppid: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0], ppid: Number(fields[1]) };
  } catch {
    return null;
  }
}

/** Whether a process still runs: a zombie (ended, not yet reaped by its parent) does not. */
export function isRunning(pid: number | string): boolean {
  const stat = processStat(pid);
  return stat !== null && stat.state !== "Z";
}
