/**
 * `bun bench/import.ts [--n 100000] [--seed 42] [--no-postgres] [--postgres-url postgres://…]`:
 * the throughput of `mnemo import` (target: 100,000 memories in well under a minute).
 * Writes N `{content, metadata}` lines to a temp file, then runs the real CLI as a
 * subprocess on a fresh embedded data dir (and on a fresh PostgreSQL database when one
 * answers): a first import, and a re-run that must add nothing. Prints a table and one
 * `BENCH_JSON {…}` line.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { memoryTexts } from "./lib/corpus";
import { cleanup, removeDir, tempDir } from "./lib/harness";
import { machineLine } from "./lib/machine";
import { createBenchDatabase, DEFAULT_POSTGRES_URL, postgresUnavailable } from "./lib/postgres";

const { values } = parseArgs({
  options: {
    n: { type: "string", default: "100000" },
    seed: { type: "string", default: "42" },
    "no-postgres": { type: "boolean" },
    "postgres-url": { type: "string" },
  },
});
const n = Number(values.n);
const ROOT = join(import.meta.dir, "..");

async function runImport(file: string, dataDir: string, env: Record<string, string>) {
  const started = performance.now();
  const proc = Bun.spawn(
    [process.execPath, join(ROOT, "cli", "mnemo.ts"), "import", file, "--user", "bench", "--data", dataDir, "--json"],
    {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", EMBEDDINGS_PROVIDER: "none", ...env },
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`import exited ${code}: ${stderr}`);
  const report = JSON.parse(stdout) as { inserted: number; existing: number; failed: number };
  return { seconds, ...report, perSecond: Math.round(n / seconds) };
}

const dir = tempDir("mnemo-bench-import-");
try {
  const file = join(dir, "memories.jsonl");
  const texts = memoryTexts(Number(values.seed), n);
  await Bun.write(
    file,
    `${texts.map((content, i) => JSON.stringify({ content, metadata: { i, source: "bench" } })).join("\n")}\n`,
  );
  const rows: Array<Record<string, unknown>> = [];
  const sqliteDir = join(dir, "sqlite");
  rows.push({ backend: "sqlite", run: "first", ...(await runImport(file, sqliteDir, {})) });
  rows.push({ backend: "sqlite", run: "re-run", ...(await runImport(file, sqliteDir, {})) });
  const adminUrl = values["postgres-url"] ?? DEFAULT_POSTGRES_URL;
  const unavailable = values["no-postgres"] ? "--no-postgres" : await postgresUnavailable(adminUrl);
  if (unavailable) console.log(`postgres: skipped (${unavailable})`);
  else {
    const db = await createBenchDatabase(adminUrl);
    try {
      const env = { MNEMO_DATABASE_URL: db.url };
      rows.push({ backend: "postgres", run: "first", ...(await runImport(file, join(dir, "pg"), env)) });
      rows.push({ backend: "postgres", run: "re-run", ...(await runImport(file, join(dir, "pg"), env)) });
    } finally {
      await db.drop();
    }
  }
  console.log(machineLine());
  console.log(
    `mnemo import of ${n} memories (one {content, metadata} per line, CLI subprocess, process start included)`,
  );
  console.log("backend   run     seconds  memories/s  inserted  existing  failed");
  for (const r of rows) {
    console.log(
      `${String(r.backend).padEnd(9)} ${String(r.run).padEnd(7)} ${(r.seconds as number).toFixed(2).padStart(7)}  ${String(r.perSecond).padStart(10)}  ` +
        `${String(r.inserted).padStart(8)}  ${String(r.existing).padStart(8)}  ${String(r.failed).padStart(6)}`,
    );
  }
  console.log(`BENCH_JSON ${JSON.stringify({ n, rows })}`);
} finally {
  removeDir(dir);
  cleanup();
}
