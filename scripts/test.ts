/**
 * `npm test`: the whole suite on the embedded store (SQLite) and on PostgreSQL, the two
 * passes at the same time (each line of their output is prefixed with its pass). The
 * PostgreSQL pass uses MNEMO_TEST_DATABASE_URL, else a local server at
 * postgres://postgres@127.0.0.1:5432/postgres; each test data dir gets its own
 * database there, named after the test process that owns it (test/helpers/database.ts),
 * so concurrent runs on one server coexist. Without a reachable PostgreSQL that pass is
 * skipped with one line saying so, except under CI, where that is a failure.
 * Before either, `biome check` (lint and format, biome.jsonc) runs over the tree: a finding
 * fails the run before any test starts. Arguments are passed to `bun test` (e.g. a file filter).
 * MNEMO_TEST_SEQUENTIAL=1 runs the passes one after the other, unprefixed.
 */
import { join } from "node:path";
import { postgresProblem } from "../test/helpers/database";
import { ensureWebApp } from "./build-app";

const DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/postgres";
const args = process.argv.slice(2);
const inCi = Boolean(process.env.CI);
const sequential = Boolean(process.env.MNEMO_TEST_SEQUENTIAL);

interface Pass {
  label: string;
  env: Record<string, string | undefined>;
}

interface RunResult {
  label: string;
  passed: number;
  failed: number;
  exitCode: number;
  seconds: number;
}

/** Copies a pass's output stream to ours, each line prefixed when passes run together. */
async function relay(
  stream: ReadableStream<Uint8Array>,
  to: NodeJS.WriteStream,
  prefix: string,
  keep: (text: string) => void,
): Promise<void> {
  const decoder = new TextDecoder();
  let partial = "";
  for await (const chunk of stream) {
    const text = decoder.decode(chunk, { stream: true });
    keep(text);
    if (!prefix) {
      to.write(text);
      continue;
    }
    const lines = (partial + text).split("\n");
    partial = lines.pop() ?? "";
    if (lines.length) to.write(lines.map((line) => `${prefix}${line}\n`).join(""));
  }
  if (partial) to.write(`${prefix}${partial}\n`);
}

/** Runs `bun test` for one pass, relaying its output and reading its closing counts. */
async function runSuite(pass: Pass, prefix: string): Promise<RunResult> {
  process.stderr.write(`\n=== ${pass.label} ===\n`);
  const started = performance.now();
  const proc = Bun.spawn([process.execPath, "test", "--timeout", "60000", ...args], {
    env: { ...process.env, ...pass.env },
    stdout: "pipe",
    stderr: "pipe",
  });
  let tail = "";
  await Promise.all([
    relay(proc.stdout, process.stdout, prefix, () => {}),
    relay(proc.stderr, process.stderr, prefix, (text) => {
      tail = (tail + text).slice(-4_000);
    }),
  ]);
  const exitCode = await proc.exited;
  const count = (word: string) => Number(new RegExp(`^\\s*(\\d+) ${word}\\s*$`, "m").exec(tail)?.[1] ?? 0);
  const seconds = (performance.now() - started) / 1000;
  return { label: pass.label, passed: count("pass"), failed: count("fail"), exitCode, seconds };
}

/** `npm run lint`: Biome's lint and format check; warnings count as findings. */
async function lint(): Promise<number> {
  process.stderr.write("\n=== lint and format (biome check) ===\n");
  const biome = join(import.meta.dir, "..", "node_modules", ".bin", "biome");
  const proc = Bun.spawn([biome, "check", "--error-on-warnings"], {
    cwd: join(import.meta.dir, ".."),
    stdout: "inherit",
    stderr: "inherit",
  });
  return proc.exited;
}

if ((await lint()) !== 0) {
  process.stderr.write("lint or format findings: `npm run lint` lists them, `npm run format` formats\n");
  process.exit(1);
}

// The server embeds the web app's build (web/dist, not committed): a fresh clone builds it here.
await ensureWebApp();

const passes: Pass[] = [{ label: "embedded store (SQLite)", env: { MNEMO_TEST_DATABASE_URL: undefined } }];
const url = process.env.MNEMO_TEST_DATABASE_URL || DEFAULT_URL;
const problem = await postgresProblem(url);
let exitCode = 0;
if (problem === null) {
  passes.push({ label: `PostgreSQL store (${url.replace(/:[^:@/]*@/, "@")})`, env: { MNEMO_TEST_DATABASE_URL: url } });
} else if (inCi) {
  process.stderr.write(`PostgreSQL suite FAILED to start: no PostgreSQL at ${url} (${problem}); CI requires it\n`);
  exitCode = 1;
} else {
  process.stderr.write(
    `PostgreSQL suite skipped: no PostgreSQL at ${url} (${problem}); start one or set MNEMO_TEST_DATABASE_URL to run it\n`,
  );
}

// The passes wait on servers, child processes and the disk much of the time, so on a small
// machine running them together takes well under the sum of their times.
const prefixes = ["sqlite   │ ", "postgres │ "];
const together = passes.length > 1 && !sequential;
const results: RunResult[] = [];
if (together) results.push(...(await Promise.all(passes.map((pass, i) => runSuite(pass, prefixes[i])))));
else for (const pass of passes) results.push(await runSuite(pass, ""));
if (problem === null) await postgresProblem(url);

for (const r of results) {
  exitCode ||= r.exitCode;
  process.stdout.write(`\n${r.label}: ${r.passed} passed, ${r.failed} failed (${r.seconds.toFixed(1)} s)`);
}
const passed = results.reduce((n, r) => n + r.passed, 0);
const failed = results.reduce((n, r) => n + r.failed, 0);
process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
process.exit(exitCode);
