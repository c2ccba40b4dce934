import { readFileSync } from "node:fs";
import { round } from "./stats";

/** A `/proc/<pid>/status` field in kB (`VmRSS` now, `VmHWM` the peak since the last reset). */
export const statusKb = (pid: number, field: "VmRSS" | "VmHWM" | "RssAnon") =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);

/** A process's resident memory in MB (one decimal), NaN once it is gone. */
export function rssMB(pid: number): number {
  try {
    return round(statusKb(pid, "VmRSS") / 1024, 1);
  } catch {
    return NaN;
  }
}
