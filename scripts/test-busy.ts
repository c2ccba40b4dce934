/**
 * `npm run test:busy`: the suite on a busy machine. Starts CPU burners (busy-looping
 * processes, one per core by default) and runs the suite while they run, optionally as
 * several copies at the same time, repeated --runs times. Each pass prints its pass and
 * fail counts and the names of its failing tests; the full output of each pass is kept in
 * a log dir. Exits non-zero when any pass failed, and says how many runs passed in a row.
 *
 * A test that passes alone but fails here depends on timing: it should wait on a state
 * (test/helpers/wait.ts) and assert outcomes that do not depend on scheduling.
 *
 * Usage: bun scripts/test-busy.ts [--runs 3] [--burners N] [--copies 1]
 *          [--backend both|sqlite|postgres] [--files test/a.test.ts,test/b.test.ts] [files…]
 *   --burners  busy-looping processes beside the suite (default: one per CPU core; 0: none)
 *   --copies   copies of the suite running at the same time (default 1)
 *   --backend  which store passes to run: both (at the same time, as `npm test`; default), sqlite or postgres
 *   --files    a comma-separated subset of test files (positional arguments add more)
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { postgresProblem } from "../test/helpers/database";

const DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/postgres";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    runs: { type: "string", default: "3" },
    burners: { type: "string", default: String(availableParallelism()) },
    copies: { type: "string", default: "1" },
    backend: { type: "string", default: "both" },
    files: { type: "string", default: "" },
  },
});

const count = (name: string, value: string, min: number): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name}: '${value}' is not an integer >= ${min}`);
  return n;
};
const runs = count("runs", values.runs!, 1);
const burnerCount = count("burners", values.burners!, 0);
const copies = count("copies", values.copies!, 1);
if (!["both", "sqlite", "postgres"].includes(values.backend!))
  throw new Error(`--backend: '${values.backend}' is not both, sqlite or postgres`);
const files = [
  ...values
    .files!.split(",")
    .map((f) => f.trim())
    .filter(Boolean),
  ...positionals,
];

/** One store pass of `bun test`: its label and the environment that selects the store. */
interface Backend {
  label: string;
  env: Record<string, string | undefined>;
}

async function backends(): Promise<Backend[]> {
  const chosen: Backend[] = [];
  if (values.backend !== "postgres") chosen.push({ label: "sqlite", env: { MNEMO_TEST_DATABASE_URL: undefined } });
  if (values.backend === "sqlite") return chosen;
  const url = process.env.MNEMO_TEST_DATABASE_URL || DEFAULT_URL;
  const problem = await postgresProblem(url);
  if (problem === null) chosen.push({ label: "postgres", env: { MNEMO_TEST_DATABASE_URL: url } });
  else if (values.backend === "postgres" || process.env.CI) throw new Error(`no PostgreSQL at ${url} (${problem})`);
  else process.stderr.write(`PostgreSQL passes skipped: no PostgreSQL at ${url} (${problem})\n`);
  return chosen;
}

/** What one pass of `bun test` reported. */
interface PassResult {
  label: string;
  passed: number;
  failed: number;
  errors: number;
  exitCode: number;
  /** `(fail) …` lines and unhandled errors, as bun printed them. */
  failures: string[];
  log: string;
  seconds: number;
}

const logDir = join(tmpdir(), `mnemo-test-busy-${new Date().toISOString().replace(/[:.]/g, "-")}`);
mkdirSync(logDir, { recursive: true });
const children = new Set<Bun.Subprocess>();

/** Runs `bun test` once on one backend; its output goes to a log file, its counts and failures are read from it. */
async function runPass(label: string, backend: Backend): Promise<PassResult> {
  const started = performance.now();
  const proc = Bun.spawn([process.execPath, "test", "--timeout", "60000", ...files], {
    env: { ...process.env, ...backend.env },
    stdout: "pipe",
    stderr: "pipe",
  });
  children.add(proc);
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  children.delete(proc);
  const output = `${stdout}\n${stderr}`;
  const log = join(logDir, `${label.replace(/[^\w-]+/g, "-")}.log`);
  writeFileSync(log, output);
  const summary = (word: string) => Number(new RegExp(`^\\s*(\\d+) ${word}\\s*$`, "m").exec(stderr)?.[1] ?? 0);
  const failures = [
    ...new Set(
      output
        .split("\n")
        .filter((line) => /^\(fail\) |^# Unhandled error/.test(line.trim()))
        .map((line) => line.trim().replace(/ \[[\d.]+m?s\]$/, "")),
    ),
  ];
  return {
    label,
    passed: summary("pass"),
    failed: summary("fail"),
    errors: summary("errors?"),
    exitCode,
    failures,
    log,
    seconds: (performance.now() - started) / 1000,
  };
}

/** Busy-looping processes, one core each; stopped at the end by their own ids. */
function startBurners(n: number): Bun.Subprocess[] {
  return Array.from({ length: n }, () => {
    const proc = Bun.spawn([process.execPath, "-e", "for (;;) {}"], { stdout: "ignore", stderr: "ignore" });
    children.add(proc);
    return proc;
  });
}

function stopChildren(): void {
  for (const proc of children) if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    stopChildren();
    process.exit(130);
  });
}

const chosen = await backends();
const scope = files.length ? `${files.length} file(s)` : "the whole suite";
process.stdout.write(
  `test:busy: ${scope}, ${runs} run(s), ${copies} cop${copies === 1 ? "y" : "ies"} at a time, ${burnerCount} CPU burner(s) on ${availableParallelism()} core(s); backends: ${chosen.map((b) => b.label).join(", ")}\nlogs: ${logDir}\n`,
);

const burners = startBurners(burnerCount);
let inARow = 0;
let longestRow = 0;
let failedRuns = 0;
try {
  for (let run = 1; run <= runs; run++) {
    const results: PassResult[] = [];
    // As in `npm test`, the backends' passes run at the same time.
    const passes = await Promise.all(
      chosen.flatMap((backend) =>
        Array.from({ length: copies }, (_, copy) =>
          runPass(`run${run}-${backend.label}${copies > 1 ? `-copy${copy + 1}` : ""}`, backend),
        ),
      ),
    );
    for (const pass of passes) {
      results.push(pass);
      const ok = pass.exitCode === 0 && pass.failed === 0;
      const errors = pass.errors ? `, ${pass.errors} error(s)` : "";
      process.stdout.write(
        `run ${run}/${runs} ${pass.label}: ${ok ? "ok" : "FAILED"} — ${pass.passed} pass, ${pass.failed} fail${errors}, exit ${pass.exitCode} (${pass.seconds.toFixed(0)} s)\n`,
      );
      for (const failure of pass.failures) process.stdout.write(`    ${failure}\n`);
      if (!ok) process.stdout.write(`    log: ${pass.log}\n`);
    }
    const runOk = results.every((r) => r.exitCode === 0 && r.failed === 0);
    if (runOk) longestRow = Math.max(longestRow, ++inARow);
    else {
      inARow = 0;
      failedRuns++;
    }
  }
} finally {
  for (const proc of burners) proc.kill("SIGKILL");
  stopChildren();
}
process.stdout.write(
  `\n${runs - failedRuns} of ${runs} run(s) passed; longest streak ${longestRow} in a row${failedRuns ? "" : " (all)"}\n`,
);
process.exit(failedRuns ? 1 : 0);
