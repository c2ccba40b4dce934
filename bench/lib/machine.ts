import { cpus, platform, release, totalmem } from "node:os";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");

function osName(): string {
  try {
    const pretty = /^PRETTY_NAME="?([^"\n]+)"?/m.exec(readFileSync("/etc/os-release", "utf8"));
    if (pretty) return `${pretty[1]} (${platform()} ${release()})`;
  } catch {
    // not Linux, or no os-release: the kernel line is enough
  }
  return `${platform()} ${release()}`;
}

function packageVersion(name: string): string {
  try {
    return JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")).version;
  } catch {
    return "?";
  }
}

/** What the figures were measured on, printed at the top of every bench. */
export function machine() {
  const cpuList = cpus();
  return {
    cpu: cpuList[0]?.model.trim() ?? "unknown",
    cores: cpuList.length,
    ramGB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: osName(),
    bun: Bun.version,
    lancedb: packageVersion("@lancedb/lancedb"),
  };
}

export function machineLine(): string {
  const m = machine();
  return `machine: ${m.cpu}, ${m.cores} cores, ${m.ramGB} GB RAM, ${m.os}, bun ${m.bun}, lancedb ${m.lancedb}`;
}

/** Which server code was measured: the tree is shared, so say whether src/ had local changes. */
export function treeLine(): string {
  const git = (...args: string[]) =>
    Bun.spawnSync(["git", ...args], { cwd: ROOT })
      .stdout.toString()
      .trim();
  const head = git("rev-parse", "--short", "HEAD") || "unknown";
  const dirty = git("status", "--porcelain", "--", "src").split("\n").filter(Boolean).length;
  return `tree: ${head}${dirty ? ` + ${dirty} uncommitted change(s) under src/` : " (src/ clean)"}`;
}
