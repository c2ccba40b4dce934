/**
 * `bun bench/large-patch.ts [--url URL] [--token TOKEN] [--rounds N] [--concurrent N]`: the
 * latency of unauthenticated `/health` while several large document PATCHes (9.3 MB
 * each: 4.9 MB of markdown in short paragraphs, 4.4 MB of payload JSON) run at once, and
 * how long each PATCH took. Prints the figures; the tests check behaviour, never time.
 *
 * Without `--url` it starts a server of its own (a child process on a temp data dir, mock
 * tokens allowed, no embedder) and stops it afterwards.
 */
import { parseArgs } from "node:util";
import { cleanup, removeDir, startBenchServer, tempDir } from "./lib/harness";
import { machineLine } from "./lib/machine";
import { round, summarize, table } from "./lib/stats";

const { values: args } = parseArgs({
  options: {
    url: { type: "string" },
    token: { type: "string", default: "mock-token-bench" },
    rounds: { type: "string", default: "3" },
    concurrent: { type: "string", default: "6" },
  },
});
const rounds = Number(args.rounds);
const concurrent = Number(args.concurrent);

const headers = { authorization: `Bearer ${args.token}`, "content-type": "application/json" };

/** 4.9 MB of markdown (headings and paragraphs, the block splitter's work) and 4.4 MB of payload JSON. */
function largeBody(workspaceId: string, seed: number): string {
  const paragraphs: string[] = [];
  for (let i = 0, length = 0; length < 4.9 * 1024 * 1024 - 200; i++) {
    paragraphs.push(
      i % 20 === 0
        ? `## Section ${seed}-${i}`
        : `Paragraph ${i} of run ${seed}: the quick brown fox jumps over the lazy dog, twice over, for good measure.`,
    );
    length += paragraphs[paragraphs.length - 1].length + 2;
  }
  const items = Array.from({ length: 60_000 }, (_, i) => ({
    id: `n${i}`,
    text: `node ${i} of ${seed} with some words in it`,
    n: i,
  }));
  return JSON.stringify({ workspace_id: workspaceId, markdown: paragraphs.join("\n\n"), document_payload: { items } });
}

const dataDir = args.url ? null : tempDir("mnemo-large-patch-");
const server = args.url ? null : await startBenchServer({ dataDir: dataDir!, env: { EMBEDDINGS_PROVIDER: "none" } });
const base = args.url ?? server!.url;
try {
  console.log(`large PATCHes against ${base} (${server ? server.where : "external server"}); ${machineLine()}`);
  const ws = (await (
    await fetch(`${base}/v1/workspaces`, {
      method: "POST",
      headers,
      body: JSON.stringify({ name: "large-patch bench" }),
    })
  ).json()) as { id: string };
  const ids: string[] = [];
  for (let i = 0; i < concurrent; i++) {
    const created = (await (
      await fetch(`${base}/v1/documents`, {
        method: "POST",
        headers,
        body: JSON.stringify({ workspace_id: ws.id, title: `large ${i}` }),
      })
    ).json()) as { document: { id: string } };
    ids.push(created.document.id);
  }
  const bodies = ids.map((_, i) => largeBody(ws.id, i));
  console.log(
    `${concurrent} concurrent PATCHes of ${round(bodies[0].length / 1024 / 1024, 1)} MB each, ${rounds} rounds`,
  );
  const health: number[] = [];
  const patches: number[] = [];
  // Quiet baseline first: /health alone.
  const quiet: number[] = [];
  for (let i = 0; i < 50; i++) {
    const t = performance.now();
    await (await fetch(`${base}/health`)).text();
    quiet.push(performance.now() - t);
  }
  for (let r = 0; r < rounds; r++) {
    let done = false;
    const statuses: number[] = [];
    const running = Promise.all(
      ids.map(async (id, i) => {
        const t = performance.now();
        const response = await fetch(`${base}/v1/documents/${id}`, { method: "PATCH", headers, body: bodies[i] });
        await response.text();
        statuses.push(response.status);
        patches.push(performance.now() - t);
      }),
    ).finally(() => (done = true));
    // /health, one after another, for as long as the PATCHes run.
    while (!done) {
      const t = performance.now();
      await (await fetch(`${base}/health`)).text();
      health.push(performance.now() - t);
    }
    await running;
    console.log(
      `round ${r + 1}: ${statuses.length} PATCHes answered ${[...new Set(statuses)].join(", ")}, ${health.length} /health answers so far`,
    );
    if (statuses.some((s) => s !== 200)) throw new Error(`PATCH statuses: ${statuses.join(", ")}`);
  }
  const row = (name: string, values: number[]) => {
    const s = summarize(values);
    return [name, String(values.length), String(round(s.p50, 1)), String(round(s.p99, 1)), String(round(s.max, 1))];
  };
  console.log(
    table(
      ["what", "n", "p50 ms", "p99 ms", "max ms"],
      [row("/health, quiet", quiet), row("/health during the PATCHes", health), row("each PATCH", patches)],
    ),
  );
} finally {
  await server?.stop();
  if (dataDir) removeDir(dataDir);
  cleanup();
}
