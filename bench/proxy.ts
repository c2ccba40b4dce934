/**
 * `npm run bench:proxy`: what Mnemo's chat-completions proxy adds to a request (docs/completions.md
 * "Benchmark"). One run: a fake upstream with a fixed reply (its own process), a Mnemo
 * server (its own process) whose user holds `--memories` memories, and one client that
 * alternates, per query, a direct call to the upstream and the same call through Mnemo,
 * for non-streaming (whole reply) and streaming (time to first byte of the body). The
 * added latency is reported as p50/p99 of the paired differences (through Mnemo − direct)
 * and of the server's own `X-Svc-Overhead-Ms`; targets: p50 ≤ 5 ms, p99 ≤ 20 ms,
 * retrieval included (memory on, the default limit of 5, queries that find memories).
 *
 *   bun bench/proxy.ts [--memories 10000] [--requests 500] [--warmup 50] [--seed 42]
 *                      [--embeddings none|fake] [--in-process] [--remember]
 *
 * `--remember` measures capture instead: each query goes through Mnemo once as it is and
 * once with `X-Svc-Remember: true` (the exchange written to a thread and an extraction job
 * queued after the reply), and the added latency is the paired difference of the two. The
 * extraction jobs run meanwhile (the fake gateway's fixed reply is not an extraction, so each
 * fails after one call; retries are put out of the run's reach).
 *
 * Rate limits and the monthly quota are raised out of reach but still checked on every
 * request (their commits are part of the figure). Only local processes are contacted.
 * Prints a table, then one `BENCH_JSON {…}` line.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ingest } from "./lib/client";
import { memoryTexts, queryTexts } from "./lib/corpus";
import {
  cleanup,
  fakeEmbedderEnv,
  giveUpAfter,
  startBenchServer,
  startFakeEmbedderProcess,
  tempDir,
  trackChild,
} from "./lib/harness";
import { machineLine, treeLine } from "./lib/machine";
import { round, summarize, table } from "./lib/stats";

// Child mode: serve the fake upstream and print its URL.
if (process.env.MNEMO_BENCH_FAKE_UPSTREAM) {
  const { startFakeUpstream } = await import("../test/helpers/fake-upstream");
  const fake = startFakeUpstream({
    record: false,
    reply: "Sure. Here is a short, fixed answer from the fake upstream model.",
  });
  console.log(`FAKE_UPSTREAM ${fake.url}`);
  await new Promise(() => {});
}

const { values: args } = parseArgs({
  options: {
    memories: { type: "string", default: "10000" },
    requests: { type: "string", default: "500" },
    warmup: { type: "string", default: "50" },
    seed: { type: "string", default: "42" },
    embeddings: { type: "string", default: "none" },
    "in-process": { type: "boolean", default: false },
    remember: { type: "boolean", default: false },
  },
});
const MEMORIES = Number(args.memories);
const REQUESTS = Number(args.requests);
const WARMUP = Number(args.warmup);
const SEED = Number(args.seed);
const USER = "bench-proxy";
if (![MEMORIES, REQUESTS, WARMUP, SEED].every(Number.isInteger) || !["none", "fake"].includes(args.embeddings!)) {
  console.error(
    "usage: bun bench/proxy.ts [--memories 10000] [--requests 500] [--warmup 50] [--seed 42] [--embeddings none|fake] [--in-process]",
  );
  process.exit(2);
}

async function startFakeUpstreamProcess(): Promise<{ url: string; stop(): void }> {
  const child = Bun.spawn([process.execPath, join(import.meta.dir, "proxy.ts")], {
    env: { ...process.env, MNEMO_BENCH_FAKE_UPSTREAM: "1" },
    stdout: "pipe",
    stderr: "inherit",
  });
  trackChild(child);
  const reader = child.stdout.getReader();
  let text = "";
  while (!/FAKE_UPSTREAM (\S+)/.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error("fake upstream exited before it was ready");
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return { url: /FAKE_UPSTREAM (\S+)/.exec(text)![1], stop: () => child.kill() };
}

const chatBody = (query: string, stream: boolean) =>
  JSON.stringify({
    model: "bench-model",
    messages: [{ role: "user", content: query }],
    ...(stream ? { stream: true } : {}),
  });

/** One call: whole reply (non-streaming) or first body bytes (streaming); ms, and the proxy's headers. */
async function call(url: string, headers: Record<string, string>, query: string, stream: boolean) {
  const started = performance.now();
  const response = await fetch(`${url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: chatBody(query, stream),
  });
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  let ms: number;
  if (stream) {
    const reader = response.body!.getReader();
    await reader.read();
    ms = performance.now() - started;
    while (!(await reader.read()).done);
  } else {
    await response.text();
    ms = performance.now() - started;
  }
  return {
    ms,
    shimmer: response.headers.get("x-svc-shimmer"),
    overhead: Number(response.headers.get("x-svc-overhead-ms") ?? NaN),
    memories: Number(response.headers.get("x-svc-memory-count") ?? 0),
  };
}

giveUpAfter(30, "bench:proxy");
console.log(machineLine());
console.log(treeLine());
console.log("note: one run on a shared machine; other work on it moves the figures.");

const upstream = await startFakeUpstreamProcess();
const embedder = args.embeddings === "fake" ? await startFakeEmbedderProcess() : null;
const dataDir = tempDir();
const server = await startBenchServer({
  dataDir,
  inProcess: args["in-process"],
  env: {
    ...(embedder ? fakeEmbedderEnv(embedder.url) : { EMBEDDINGS_PROVIDER: "none" }),
    LLM_GATEWAY_URL: upstream.url,
    MNEMO_RATE_LIMIT_KEY_PER_MINUTE: "1000000",
    MNEMO_RATE_LIMIT_PRINCIPAL_PER_HOUR: "1000000",
    MONTHLY_TOKEN_LIMIT: "1000000000000",
    MNEMO_EXTRACTION_RETRY_MS: "3600000",
  },
});
try {
  const seedStarted = performance.now();
  await ingest(server.url, USER, memoryTexts(SEED, MEMORIES), 8);
  await server.ops.drain();
  await server.ops.settle();
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  console.log(
    `seeded ${MEMORIES} memories for ${USER} in ${round(seedSeconds, 1)} s (${server.where}, embeddings: ${args.embeddings})`,
  );

  const proxy = { url: `${server.url}/v1`, headers: { authorization: `Bearer mock-token-${USER}` } };
  const REMEMBER = args.remember;
  // With --remember the baseline is Mnemo without capture, and the measured side captures.
  const direct = REMEMBER ? { url: proxy.url, headers: { ...proxy.headers } } : { url: upstream.url, headers: {} };
  if (REMEMBER) proxy.headers = { ...proxy.headers, "x-svc-remember": "true" } as typeof proxy.headers;
  const queries = queryTexts(SEED + 1, WARMUP + REQUESTS);
  const modes = [false, true] as const;
  const results = {
    nonStreaming: { direct: [] as number[], proxy: [] as number[], diff: [] as number[], overhead: [] as number[] },
    streamingTtfb: { direct: [] as number[], proxy: [] as number[], diff: [] as number[], overhead: [] as number[] },
  };
  const shimmers: Record<string, number> = {};
  let injectedMemories = 0;
  for (let i = 0; i < queries.length; i++) {
    for (const stream of modes) {
      // Alternate which goes first, so neither side always gets the warmer caches.
      const first = i % 2 === 0;
      const d1 = first ? await call(direct.url, direct.headers, queries[i], stream) : null;
      const p = await call(proxy.url, proxy.headers, queries[i], stream);
      const d = d1 ?? (await call(direct.url, direct.headers, queries[i], stream));
      if (i < WARMUP) continue;
      const bucket = stream ? results.streamingTtfb : results.nonStreaming;
      bucket.direct.push(d.ms);
      bucket.proxy.push(p.ms);
      bucket.diff.push(p.ms - d.ms);
      bucket.overhead.push(p.overhead);
      shimmers[p.shimmer ?? "?"] = (shimmers[p.shimmer ?? "?"] ?? 0) + 1;
      injectedMemories += p.memories;
    }
  }
  const report = Object.fromEntries(
    Object.entries(results).map(([mode, r]) => [
      mode,
      {
        direct: summarize(r.direct),
        proxy: summarize(r.proxy),
        added: summarize(r.diff),
        serverOverhead: summarize(r.overhead),
      },
    ]),
  ) as Record<
    keyof typeof results,
    {
      direct: ReturnType<typeof summarize>;
      proxy: ReturnType<typeof summarize>;
      added: ReturnType<typeof summarize>;
      serverOverhead: ReturnType<typeof summarize>;
    }
  >;
  const rows = Object.entries(report).flatMap(([mode, r]) => [
    [mode, REMEMBER ? "through Mnemo, not captured" : "direct to upstream", r.direct.p50, r.direct.p99],
    [mode, REMEMBER ? "through Mnemo, captured" : "through Mnemo", r.proxy.p50, r.proxy.p99],
    [mode, "added (paired difference)", r.added.p50, r.added.p99],
    [mode, "X-Svc-Overhead-Ms", r.serverOverhead.p50, r.serverOverhead.p99],
  ]);
  console.log(`\n${REQUESTS} requests per mode after ${WARMUP} warm-up, 1 client, memory on (limit 5):`);
  console.log(table(["mode", "ms", "p50", "p99"], rows));
  const total = REQUESTS * 2;
  console.log(
    `shimmer: ${Object.entries(shimmers)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}; memories injected per request: ${round(injectedMemories / total, 2)}`,
  );
  const targets = {
    p50: report.nonStreaming.added.p50 <= 5 && report.streamingTtfb.added.p50 <= 5,
    p99: report.nonStreaming.added.p99 <= 20 && report.streamingTtfb.added.p99 <= 20,
  };
  console.log(
    `targets (added p50 ≤ 5 ms, p99 ≤ 20 ms): p50 ${targets.p50 ? "met" : "missed"}, p99 ${targets.p99 ? "met" : "missed"}`,
  );
  console.log(
    `BENCH_JSON ${JSON.stringify({ remember: REMEMBER, memories: MEMORIES, requests: REQUESTS, warmup: WARMUP, embeddings: args.embeddings, where: server.where, seedSeconds: round(seedSeconds, 1), report, shimmers, targets })}`,
  );
} finally {
  await server.stop();
  upstream.stop();
  await embedder?.stop();
  cleanup();
}
