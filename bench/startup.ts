/**
 * Startup of the single binary against `bun cli/mnemo.ts`: wall time (median of --runs)
 * and peak RSS of each light command, then `serve` from spawn to the first 200 on /health:
 * its first start on an empty data dir and TMPDIR, then the median of --runs starts on that
 * warm data dir, and its RSS at idle. The binary runs as a copy alone in a temp dir (no
 * node_modules beside it). The figures in docs/performance.md "Single binary" come from here.
 *
 * Usage: bun bench/startup.ts [--binary dist/mnemo] [--build] [--runs 7]
 *   --build  (re)build the binary first with scripts/build-binary.ts
 */
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const ROOT = resolve(import.meta.dir, "..");
const { values } = parseArgs({
  options: {
    binary: { type: "string", default: "dist/mnemo" },
    build: { type: "boolean", default: false },
    runs: { type: "string", default: "7" },
  },
});
const runs = Math.max(1, Number(values.runs));
const binary = resolve(ROOT, values.binary!);
if (values.build || !existsSync(binary)) {
  // In a process of its own: Linux counts a child's peak RSS from the fork, so a bench grown
  // by the build (~1 GB) would be every command's peak RSS below.
  const script = `const { buildBinary } = await import(${JSON.stringify(join(ROOT, "scripts", "build-binary.ts"))});
const built = await buildBinary({ entry: "cli/mnemo.ts", outfile: ${JSON.stringify(binary)} });
process.stdout.write(\`built \${built.outfile}\\n\`);`;
  const build = Bun.spawnSync([process.execPath, "-e", script], { cwd: ROOT, stdout: "inherit", stderr: "inherit" });
  if (build.exitCode !== 0) throw new Error("the build failed");
}

const work = mkdtempSync(join(tmpdir(), "mnemo-bench-startup-"));
// One data dir per launcher: the source tree may carry newer migrations than the binary.
const dataDirs: Record<string, string> = { binary: join(work, "data-binary"), source: join(work, "data-source") };
/** A private TMPDIR: the first binary run that needs LanceDB copies its native module here. */
const binTmp = mkdtempSync(join(work, "tmp-"));
const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: work,
  TMPDIR: binTmp,
  EMBEDDINGS_PROVIDER: "none",
  MNEMO_LOG_LEVEL: "warn",
};
/** The binary copied alone into the work dir, as it would be installed. */
const installed = join(work, "mnemo");
copyFileSync(binary, installed);
const launchers: Record<string, string[]> = {
  binary: [installed],
  source: [process.execPath, join(ROOT, "cli", "mnemo.ts")],
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0)} MB`;

function measure(argv: string[]): { ms: number; rss: number } {
  const times: number[] = [];
  let rss = 0;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const result = Bun.spawnSync(argv, { cwd: work, env, stdout: "pipe", stderr: "pipe" });
    times.push(performance.now() - started);
    if (result.exitCode !== 0) throw new Error(`${argv.join(" ")} failed: ${result.stderr.toString()}`);
    rss = Math.max(rss, result.resourceUsage.maxRSS);
  }
  return { ms: median(times), rss };
}

// A key to list, so `keys list` reads a row.
for (const [name, launcher] of Object.entries(launchers))
  Bun.spawnSync([...launcher, "keys", "create", "--user", "bench", "--data", dataDirs[name]], { env, cwd: work });
const help = Bun.spawnSync([installed, "--help"], { env }).stdout.toString();
const DIR = "<data>";
const commands: string[][] = [
  ["--help"],
  ["keys", "--help"],
  ["keys", "list", "--data", DIR],
  ["dev-token", "create", "--user", "bench", "--data", DIR],
];
for (const extra of ["escrow", "usage"])
  if (new RegExp(`^ {2}${extra}\\b`, "m").test(help)) commands.push([extra, "--help"]);

process.stdout.write(`\nlight commands, median of ${runs} runs (wall ms) and peak RSS\n`);
process.stdout.write(`${"command".padEnd(46)} ${"binary".padStart(16)} ${"bun cli/mnemo.ts".padStart(18)}\n`);
for (const args of commands) {
  const cells = Object.entries(launchers).map(([name, launcher]) => {
    const { ms, rss } = measure([...launcher, ...args.map((a) => (a === DIR ? dataDirs[name] : a))]);
    return `${ms.toFixed(0)} ms ${mb(rss)}`;
  });
  const label = args.join(" ");
  process.stdout.write(`${label.padEnd(46)} ${cells[0].padStart(16)} ${cells[1].padStart(18)}\n`);
}

/** A port that was free a moment ago (serve prints its URL, but polling needs it up front). */
function freePort(): number {
  const probe = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

/** Spawns `serve` on `data`; ms until the first 200 on /health, then (with `measureRss`) RSS after 2 s idle. */
async function start(launcher: string[], data: string, measureRss = false): Promise<{ ms: number; idleRss: number }> {
  const port = freePort();
  const started = performance.now();
  const proc = Bun.spawn([...launcher, "serve", "--port", String(port), "--data", data], {
    cwd: work,
    env,
    stdout: "ignore",
    stderr: "pipe",
  });
  let ms = 0;
  try {
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`serve exited: ${await new Response(proc.stderr).text()}`);
      const ok = await fetch(`http://127.0.0.1:${port}/health`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      await Bun.sleep(2);
    }
    ms = performance.now() - started;
    if (!measureRss) return { ms, idleRss: 0 };
    await Bun.sleep(2000);
    const status = readFileSync(`/proc/${proc.pid}/status`, "utf8");
    const idleRss = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
    return { ms, idleRss };
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}

process.stdout.write(
  `\nserve: spawn to first 200 on /health; first start on an empty data dir, then median of ${runs} on it warm; RSS after 2 s idle\n`,
);
for (const [name, launcher] of Object.entries(launchers)) {
  const data = mkdtempSync(join(work, `serve-${name}-`));
  const first = await start(launcher, data);
  const warm = [];
  for (let i = 0; i < runs; i++) warm.push(await start(launcher, data, i === runs - 1));
  const firstNote = name === "binary" ? " (extracts LanceDB into an empty TMPDIR)" : "";
  const warmMs = warm.map((r) => r.ms.toFixed(0)).join(", ");
  process.stdout.write(
    `${name.padEnd(8)} first ${first.ms.toFixed(0)} ms${firstNote}; warm median ${median(warm.map((r) => r.ms)).toFixed(0)} ms [${warmMs}]; idle RSS ${mb(warm.at(-1)!.idleRss)}\n`,
  );
}

// What the binary is made of: the native modules it embeds, and Bun itself. LanceDB's is
// measured as embedded (stripped or not): the copy `serve` extracted into the private TMPDIR.
const sizeOf = (path: string) => (existsSync(path) ? statSync(path).size : 0);
const extracted = readdirSync(binTmp)
  .filter((name) => name.endsWith(".node"))
  .map((name) => sizeOf(join(binTmp, name)));
const parts = {
  "LanceDB native module": Math.max(0, ...extracted),
  "libonnxruntime.so.1": sizeOf(join(ROOT, "node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1")),
  "onnxruntime_binding.node": sizeOf(
    join(ROOT, "node_modules/onnxruntime-node/bin/napi-v6/linux/x64/onnxruntime_binding.node"),
  ),
  "Bun runtime (its executable)": sizeOf(process.execPath),
  "Scalar bundle (OpenAPI page)": sizeOf(join(ROOT, "node_modules/@scalar/api-reference/dist/browser/standalone.js")),
};
const total = sizeOf(binary);
process.stdout.write(`\nbinary ${mb(total)}\n`);
for (const [part, bytes] of Object.entries(parts))
  process.stdout.write(`  ${part.padEnd(30)} ${mb(bytes).padStart(7)}\n`);
const rest = total - Object.values(parts).reduce((a, b) => a + b, 0);
process.stdout.write(`  ${"rest (our JS and its deps)".padEnd(30)} ${mb(rest).padStart(7)}\n`);
rmSync(work, { recursive: true, force: true });
