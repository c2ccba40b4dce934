/**
 * `bun bench/hostile-input.ts [--url URL] [--token TOKEN] [--repeat N]`: times the hostile
 * bodies of docs/api.md#requests-and-limits against a server and prints the figures (the tests check the answers,
 * never the time).
 *
 * - 30,000 nested arrays in memory-search `filters` (a 60 KB body);
 * - 100,000 nested arrays in memory `metadata`;
 * - 20,000 keys in memory-search `filters`;
 * - `/health` answered while four of the deep bodies are in flight.
 *
 * Without `--url` it starts a server of its own (a child process on a temp data dir, mock
 * tokens allowed, full text only) and stops it afterwards. With `--url`, pass a token the
 * server accepts (default `mock-token-bench`, which needs `--allow-mock-tokens`).
 */
import { parseArgs } from "node:util";
import { cleanup, removeDir, startBenchServer, tempDir } from "./lib/harness";
import { machineLine } from "./lib/machine";
import { round, summarize, table } from "./lib/stats";

const { values: args } = parseArgs({
  options: {
    url: { type: "string" },
    token: { type: "string", default: "mock-token-bench" },
    repeat: { type: "string", default: "20" },
  },
});
const repeat = Number(args.repeat);
if (!Number.isInteger(repeat) || repeat < 1) throw new Error("--repeat must be a positive integer");

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
const manyKeys = (count: number) => `{${Array.from({ length: count }, (_, i) => `"key${i}":"value${i}"`).join(",")}}`;

const cases: Array<{ name: string; path: string; body: string }> = [
  {
    name: "30,000 nested arrays in search filters",
    path: "/v1/memories/search",
    body: `{"query":"x","filters":{"k":${nested(30_000)}}}`,
  },
  {
    name: "100,000 nested arrays in memory metadata",
    path: "/v1/memories",
    body: `{"content":"x","metadata":${nested(100_000)}}`,
  },
  {
    name: "20,000 keys in search filters",
    path: "/v1/memories/search",
    body: `{"query":"x","filters":${manyKeys(20_000)}}`,
  },
];

async function post(
  base: string,
  path: string,
  body: string,
): Promise<{ ms: number; status: number; message: string }> {
  const start = performance.now();
  const response = await fetch(base + path, {
    method: "POST",
    headers: { authorization: `Bearer ${args.token}`, "content-type": "application/json" },
    body,
  });
  const text = await response.text();
  const ms = performance.now() - start;
  let message = text.slice(0, 80);
  try {
    message = JSON.parse(text).error?.message ?? "(no error)";
  } catch {}
  return { ms, status: response.status, message };
}

const dataDir = args.url ? null : tempDir("mnemo-hostile-");
const server = args.url ? null : await startBenchServer({ dataDir: dataDir!, env: { EMBEDDINGS_PROVIDER: "none" } });
const base = args.url ?? server!.url;
try {
  console.log(`hostile input against ${base} (${server ? server.where : "external server"}); ${machineLine()}`);
  const rows: string[][] = [];
  for (const { name, path, body } of cases) {
    const runs = [];
    for (let i = 0; i < repeat; i++) runs.push(await post(base, path, body));
    const summary = summarize(runs.map((run) => run.ms));
    rows.push([
      name,
      `${Math.round(body.length / 1024)} KB`,
      String(runs[0].status),
      runs[0].message,
      String(round(summary.p50, 2)),
      String(round(summary.p99, 2)),
      String(round(summary.max, 2)),
    ]);
  }
  console.log(table(["body", "size", "status", "answer", "p50 ms", "p99 ms", "max ms"], rows));

  // /health while four deep bodies are in flight (a deep body once stalled it: docs/performance.md#hostile-input).
  const hostile = Array.from({ length: 4 }, () => post(base, cases[0].path, cases[0].body));
  const healthStart = performance.now();
  const health = await fetch(`${base}/health`);
  const healthMs = performance.now() - healthStart;
  await Promise.all(hostile);
  console.log(`/health during 4 parallel deep bodies: ${health.status} in ${round(healthMs, 2)} ms`);
} finally {
  await server?.stop();
  if (dataDir) removeDir(dataDir);
  cleanup();
}
