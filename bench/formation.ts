/**
 * `bun bench/formation.ts`: memory extraction throughput against a fake gateway (its own
 * process) that answers at once: each user sentence is a fact and each fact is added, so
 * the figure is Mnemo's own work per extraction — admission and quota hold, two gateway
 * round trips, a memory search per fact, the validation, one transaction (inserts, history,
 * outbox), metering. Clients post `POST /v1/memories/extract` with two facts each.
 *
 *   bun bench/formation.ts [--requests 200] [--concurrency 1,4] [--seed 42]
 *
 * Prints a table, then one `BENCH_JSON {…}` line.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { cleanup, giveUpAfter, startBenchServer, tempDir, trackChild } from "./lib/harness";
import { machineLine, treeLine } from "./lib/machine";
import { round, summarize, table } from "./lib/stats";

if (process.env.MNEMO_BENCH_FAKE_MEMORY_MODEL) {
  const { startFakeUpstream } = await import("../test/helpers/fake-upstream");
  const fake = startFakeUpstream({ record: false, memoryModel: true });
  console.log(`FAKE_UPSTREAM ${fake.url}`);
  await new Promise(() => {});
}

const { values: args } = parseArgs({
  options: {
    requests: { type: "string", default: "200" },
    concurrency: { type: "string", default: "1,4" },
    seed: { type: "string", default: "42" },
  },
});
const REQUESTS = Number(args.requests);
const LEVELS = args.concurrency!.split(",").map(Number);

async function startFake(): Promise<{ url: string; stop(): void }> {
  const child = Bun.spawn([process.execPath, join(import.meta.dir, "formation.ts")], {
    env: { ...process.env, MNEMO_BENCH_FAKE_MEMORY_MODEL: "1" },
    stdout: "pipe",
    stderr: "inherit",
  });
  trackChild(child);
  const reader = child.stdout.getReader();
  let text = "";
  while (!/FAKE_UPSTREAM (\S+)/.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error("fake gateway exited before it was ready");
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return { url: /FAKE_UPSTREAM (\S+)/.exec(text)![1], stop: () => child.kill() };
}

giveUpAfter(2, "bench:formation");
console.log(machineLine());
console.log(treeLine());
console.log("note: one run on a shared machine; other work on it moves the figures.");
const fake = await startFake();
const server = await startBenchServer({
  dataDir: tempDir(),
  env: {
    EMBEDDINGS_PROVIDER: "none",
    LLM_GATEWAY_URL: fake.url,
    MNEMO_RATE_LIMIT_PRINCIPAL_PER_HOUR: "1000000",
    MNEMO_RATE_LIMIT_KEY_PER_MINUTE: "1000000",
    MONTHLY_TOKEN_LIMIT: "1000000000000",
  },
});
try {
  const rows: Array<Array<string | number>> = [];
  const report: Record<string, unknown> = {};
  for (const concurrency of LEVELS) {
    const latencies: number[] = [];
    let next = 0;
    let facts = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async (_, k) => {
        for (let i = next++; i < REQUESTS; i = next++) {
          const body = {
            messages: [
              {
                role: "user",
                content: `My locker number at gym ${args.seed}-${concurrency}-${i} is ${i * 7 + k}. I train there on day ${i % 7} with coach number ${i}.`,
              },
              { role: "assistant", content: "Got it." },
            ],
          };
          const t0 = performance.now();
          const response = await fetch(`${server.url}/v1/memories/extract`, {
            method: "POST",
            headers: {
              authorization: `Bearer mock-token-bench-formation-${concurrency}`,
              "content-type": "application/json",
            },
            body: JSON.stringify(body),
          });
          const answer = (await response.json()) as { decisions?: Array<{ action: string }> };
          if (response.status !== 200) throw new Error(`extract: ${response.status} ${JSON.stringify(answer)}`);
          latencies.push(performance.now() - t0);
          facts += answer.decisions!.filter((d) => d.action === "add").length;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const s = summarize(latencies);
    rows.push([concurrency, round(REQUESTS / seconds, 1), round(facts / seconds, 1), s.p50, s.p99]);
    report[`c${concurrency}`] = {
      extractionsPerSecond: round(REQUESTS / seconds, 1),
      memoriesPerSecond: round(facts / seconds, 1),
      latency: s,
    };
  }
  console.log(`\n${REQUESTS} extractions per level (2 facts each, all added), SQLite, full-text search:`);
  console.log(table(["clients", "extractions/s", "memories/s", "p50 ms", "p99 ms"], rows));
  console.log(`BENCH_JSON ${JSON.stringify({ requests: REQUESTS, where: server.where, report })}`);
} finally {
  await server.stop();
  fake.stop();
  cleanup();
}
