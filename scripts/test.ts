/**
 * `npm test`: the whole suite, once on the embedded store (SQLite) and once on
 * PostgreSQL. The PostgreSQL run uses MNEMO_TEST_DATABASE_URL, else a local server at
 * postgres://postgres@127.0.0.1:5432/postgres; each test data dir gets its own
 * database there, named after the test process that owns it (test/helpers/database.ts),
 * so concurrent runs on one server coexist. Without a reachable PostgreSQL the second run
 * is skipped with one line saying so, except under CI, where that is a failure.
 * Before either, `biome check` (lint and format, biome.jsonc) runs over the tree: a finding
 * fails the run before any test starts. Arguments are passed to `bun test` (e.g. a file filter).
 */
import { join } from "node:path";
import { postgresProblem } from "../test/helpers/database";
import { ensureWebApp } from "./build-app";

const DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/postgres";
const args = process.argv.slice(2);
const inCi = Boolean(process.env.CI);

interface RunResult {
  passed: number;
  failed: number;
  exitCode: number;
}

/** Runs `bun test`, echoing its output and reading its closing counts. */
async function runSuite(label: string, env: Record<string, string | undefined>): Promise<RunResult> {
  process.stderr.write(`\n=== ${label} ===\n`);
  const proc = Bun.spawn([process.execPath, "test", "--timeout", "60000", ...args], {
    env: { ...process.env, ...env },
    stdout: "inherit",
    stderr: "pipe",
  });
  let tail = "";
  const decoder = new TextDecoder();
  for await (const chunk of proc.stderr) {
    process.stderr.write(chunk);
    tail = (tail + decoder.decode(chunk)).slice(-4_000);
  }
  const exitCode = await proc.exited;
  const count = (word: string) => Number(new RegExp(`^\\s*(\\d+) ${word}\\s*$`, "m").exec(tail)?.[1] ?? 0);
  return { passed: count("pass"), failed: count("fail"), exitCode };
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

const results: RunResult[] = [];
results.push(await runSuite("embedded store (SQLite)", { MNEMO_TEST_DATABASE_URL: undefined }));

const url = process.env.MNEMO_TEST_DATABASE_URL || DEFAULT_URL;
const problem = await postgresProblem(url);
let exitCode = results[0].exitCode;
if (problem === null) {
  results.push(await runSuite(`PostgreSQL store (${url.replace(/:[^:@/]*@/, "@")})`, { MNEMO_TEST_DATABASE_URL: url }));
  exitCode ||= results[1].exitCode;
  await postgresProblem(url);
} else if (inCi) {
  process.stderr.write(`PostgreSQL suite FAILED to start: no PostgreSQL at ${url} (${problem}); CI requires it\n`);
  exitCode ||= 1;
} else {
  process.stderr.write(
    `PostgreSQL suite skipped: no PostgreSQL at ${url} (${problem}); start one or set MNEMO_TEST_DATABASE_URL to run it\n`,
  );
}

const passed = results.reduce((n, r) => n + r.passed, 0);
const failed = results.reduce((n, r) => n + r.failed, 0);
process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
process.exit(exitCode);
