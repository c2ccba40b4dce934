/**
 * `npm run stress`: the full form of the reliability suites (docs/reliability.md), printing their figures.
 *
 * 1. test/reliability/ at full size (MNEMO_RELIABILITY=full: 50 SIGKILLs, 20,000 fuzz
 *    cases) and strict (MNEMO_RELIABILITY_STRICT=1: open findings fail instead of being
 *    expected failures), on SQLite and then on PostgreSQL (as `npm test` picks it).
 *    The PostgreSQL fault test cuts Mnemo's connections through a local TCP proxy; the
 *    shared PostgreSQL server itself is never restarted.
 * 2. With `--full-run-logs`: the whole `npm test` once more with every test server
 *    logging at debug level, its output scanned for credentials (API keys, developer
 *    tokens, ID tokens, bearer values, client keys) in server log lines.
 * 3. With `--load` / `--soak`: bench/load.ts (60 s, both backends) and bench/soak.ts
 *    (100,000 writes).
 *
 * Every figure line is collected and printed again at the end, with the command that
 * produced it. Arguments after `--` go to `bun test` (e.g. a file filter).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

const argv = process.argv.slice(2);
const split = argv.indexOf("--");
const flags = new Set(split >= 0 ? argv.slice(0, split) : argv);
const testArgs = split >= 0 ? argv.slice(split + 1) : ["test/reliability/"];
const DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/postgres";
const work = mkdtempSync(join(tmpdir(), "mnemo-stress-"));
const figures = join(work, "figures.txt");

async function run(
  label: string,
  cmd: string[],
  env: Record<string, string | undefined>,
  capture = false,
): Promise<{ code: number; output: string }> {
  process.stderr.write(`\n=== ${label} ===\n$ ${cmd.join(" ")}\n`);
  const proc = Bun.spawn(cmd, { env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  let output = "";
  const pump = async (stream: ReadableStream<Uint8Array>, sink: NodeJS.WriteStream) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      sink.write(chunk);
      if (capture) output += decoder.decode(chunk, { stream: true });
    }
  };
  await Promise.all([pump(proc.stdout, process.stdout), pump(proc.stderr, process.stderr)]);
  return { code: await proc.exited, output };
}

async function postgresReachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Credentials as they look in a log line: never expected in one. */
const SECRET_PATTERNS: Array<[string, RegExp]> = [
  ["API key", /svc_sk_(?:live|test)_[A-Za-z0-9_-]{16,}/],
  ["developer token", /svc_dev_[A-Za-z0-9_-]{16,}/],
  ["JWT", /eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/],
  ["bearer value", /Bearer\s+(?!<)[A-Za-z0-9._~+/-]{12,}/i],
  ["mock token", /mock-token-[A-Za-z0-9_]/],
];
const LOG_LINE = /^\S*\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z (DEBUG|INFO|WARN|ERROR) /;

const results: Array<[string, number]> = [];
const pgUrl = process.env.MNEMO_TEST_DATABASE_URL || DEFAULT_URL;
const hasPg = await postgresReachable(pgUrl);
const full = { MNEMO_RELIABILITY: "full", MNEMO_RELIABILITY_STRICT: "1", MNEMO_RELIABILITY_FIGURES: figures };
const bunTest = [process.execPath, "test", "--timeout", "0", ...testArgs];

results.push([
  "reliability, SQLite",
  (await run("reliability suites, full form, SQLite", bunTest, { ...full, MNEMO_TEST_DATABASE_URL: undefined })).code,
]);
if (hasPg)
  results.push([
    "reliability, PostgreSQL",
    (
      await run(`reliability suites, full form, PostgreSQL (${pgUrl.replace(/:[^:@/]*@/, "@")})`, bunTest, {
        ...full,
        MNEMO_TEST_DATABASE_URL: pgUrl,
      })
    ).code,
  ]);
else process.stderr.write(`PostgreSQL form skipped: no PostgreSQL at ${pgUrl}\n`);

if (flags.has("--full-run-logs")) {
  const { code, output } = await run(
    "npm test with every server logging at debug level",
    [process.execPath, "scripts/test.ts"],
    { MNEMO_TEST_LOG: "debug" },
    true,
  );
  const logLines = output.split("\n").filter((line) => LOG_LINE.test(line.replace(/^\[[^\]]*\]\s*/, "")));
  const hits = logLines.flatMap((line) =>
    SECRET_PATTERNS.filter(([, re]) => re.test(line)).map(([name]) => `${name}: ${line.slice(0, 200)}`),
  );
  const line = `[reliability] secrets (full npm test run, debug logs): ${logLines.length} server log lines scanned, ${hits.length} with a credential`;
  console.log(line);
  for (const hit of hits.slice(0, 20)) console.log(`  ${hit}`);
  await Bun.write(
    figures,
    `${
      (await Bun.file(figures)
        .text()
        .catch(() => "")) + line
    }\n`,
  );
  // The run's own failures are `npm test`'s business; this step fails only on a credential.
  if (code !== 0) console.log(`(npm test itself exited ${code}: see its output above)`);
  results.push(["secrets in a full run's logs", hits.length ? 1 : 0]);
}
if (flags.has("--load"))
  results.push([
    "bench/load.ts",
    (
      await run(
        "load, 60 s, embedded and two replicas",
        [process.execPath, "bench/load.ts", "--duration", "60", "--backend", hasPg ? "both" : "embedded"],
        {},
      )
    ).code,
  ]);
if (flags.has("--soak"))
  results.push([
    "bench/soak.ts",
    (await run("soak, 100,000 writes", [process.execPath, "bench/soak.ts", "--writes", "100000"], {})).code,
  ]);

console.log("\n=== figures ===");
try {
  console.log(readFileSync(figures, "utf8").trim());
} catch {
  console.log("(none recorded)");
}
console.log("\n=== results ===");
for (const [name, code] of results) console.log(`${code === 0 ? "ok  " : "FAIL"} ${name}`);
rmSync(work, { recursive: true, force: true });
process.exit(results.some(([, code]) => code !== 0) ? 1 : 0);
