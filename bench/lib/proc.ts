import { readdirSync, readFileSync } from "node:fs";
import { round } from "./stats";

/** A `/proc/<pid>/status` field in kB (`VmRSS` now, `VmHWM` the peak since the last reset). */
export const statusKb = (pid: number, field: "VmRSS" | "VmHWM" | "RssAnon" | "RssFile") =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);

/** A process's resident memory in MB (one decimal), NaN once it is gone. */
export function rssMB(pid: number): number {
  try {
    return round(statusKb(pid, "VmRSS") / 1024, 1);
  } catch {
    return NaN;
  }
}

/** A process's resident memory by kind, in MB: anonymous (heaps, native allocations) and file-backed (mapped files: SQLite's memory map, code). */
export function rssPartsMB(pid: number): { anon: number; file: number } {
  return { anon: round(statusKb(pid, "RssAnon") / 1024, 1), file: round(statusKb(pid, "RssFile") / 1024, 1) };
}

/**
 * Resident memory of a process's child processes in MB (its index children: the writer's
 * child while it runs, an ANN build's), 0 when it has none: reported beside the server's own.
 */
export function childrenRssMB(pid: number): number {
  let kb = 0;
  for (const child of childPids(pid)) {
    try {
      // A child that ended and was not yet reaped has no VmRSS.
      kb += statusKb(child, "VmRSS") || 0;
    } catch {
      // Ended meanwhile.
    }
  }
  return round(kb / 1024, 1);
}

/** A `/proc/…/stat` line's command name and the fields after it (the name, in parentheses, may hold spaces). */
function statFields(path: string): { name: string; rest: string[] } {
  const stat = readFileSync(path, "utf8");
  return {
    name: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")),
    rest: stat.slice(stat.lastIndexOf(")") + 2).split(" "),
  };
}

/** The pids of a process's child processes now (ppid is the 2nd field after the name). */
function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (Number(statFields(`/proc/${entry}/stat`).rest[1]) === pid) out.push(Number(entry));
    } catch {
      // Ended meanwhile.
    }
  }
  return out;
}

/** Clock ticks a second of `/proc/<pid>/stat` times (Linux's USER_HZ). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time of a process so far, in ticks, per thread name (`main` for the thread whose id is
 * the process's, LanceDB's runtime threads as `tokio-rt-worker`, …) and `children` for its
 * child processes, ended and running (the index writer's child, ANN builds). Empty once
 * the process is gone.
 */
export function cpuTicks(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const { name, rest } = statFields(`/proc/${pid}/task/${tid}/stat`);
      // utime and stime are the 14th and 15th fields, 12th and 13th after the name.
      const key = tid === String(pid) ? "main" : name;
      out.set(key, (out.get(key) ?? 0) + Number(rest[11]) + Number(rest[12]));
    }
    const { rest } = statFields(`/proc/${pid}/stat`);
    // Ended children (cutime, cstime) and those running now: a child counted running at one
    // reading and ended at the next moves from one sum to the other, and the difference holds.
    let children = Number(rest[13]) + Number(rest[14]);
    for (const child of childPids(pid)) {
      try {
        const { rest: times } = statFields(`/proc/${child}/stat`);
        children += Number(times[11]) + Number(times[12]);
      } catch {
        // Ended meanwhile.
      }
    }
    out.set("children", children);
  } catch {
    // Gone meanwhile.
  }
  return out;
}

/** Between two `cpuTicks` readings `seconds` apart: each thread name's share of a core, in %, busiest first. */
export function cpuShares(before: Map<string, number>, after: Map<string, number>, seconds: number): string {
  return [...after]
    .map(([name, ticks]) => [name, (100 * (ticks - (before.get(name) ?? 0))) / TICKS_PER_SECOND / seconds] as const)
    .filter(([, share]) => share >= 1)
    .sort((a, b) => b[1] - a[1])
    .map(([name, share]) => `${name} ${round(share, 0)} %`)
    .join(", ");
}
