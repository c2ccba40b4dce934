/**
 * Paired comparison of two recall bench runs on the same sets: per set, the R@5 of each,
 * the questions that went up and down, a two-sided sign test over those, and a 95% paired
 * bootstrap interval of the difference (10,000 resamples of the questions, fixed seed).
 *
 *   bun bench/recall.ts > before.txt; (change); bun bench/recall.ts > after.txt
 *   bun bench/compare-recall.ts before.txt after.txt
 */
import { readFileSync } from "node:fs";

type Run = Map<string, number[]>;

function readRun(path: string): Run {
  const run: Run = new Map();
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (!line.startsWith("RECALL_JSON ")) continue;
    const json = JSON.parse(line.slice("RECALL_JSON ".length)) as { data: string; r5: number[] };
    run.set(json.data.replace(/^.*\/(shared\/bench\/|bench\/)/, ""), json.r5);
  }
  return run;
}

/** Two-sided sign test: the probability of a split at least this uneven among n fair coin flips. */
function signTest(up: number, down: number): number {
  const n = up + down;
  if (n === 0) return 1;
  const k = Math.min(up, down);
  let tail = 0;
  let term = 0.5 ** n; // C(n, 0) / 2^n
  for (let i = 0; i <= k; i++) {
    tail += term;
    term = (term * (n - i)) / (i + 1);
  }
  return Math.min(1, 2 * tail);
}

function bootstrap(diffs: number[], seed = 1): [number, number] {
  let state = seed;
  const next = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  const means: number[] = [];
  for (let r = 0; r < 10_000; r++) {
    let sum = 0;
    for (let i = 0; i < diffs.length; i++) sum += diffs[Math.floor(next() * diffs.length)];
    means.push(sum / diffs.length);
  }
  means.sort((a, b) => a - b);
  return [means[249], means[9749]];
}

const [beforePath, afterPath] = process.argv.slice(2);
if (!beforePath || !afterPath) {
  console.error("usage: bun bench/compare-recall.ts BEFORE.txt AFTER.txt (outputs of bench/recall.ts)");
  process.exit(2);
}
const before = readRun(beforePath);
const after = readRun(afterPath);
for (const [set, a] of before) {
  const b = after.get(set);
  if (!b || b.length !== a.length) continue;
  const diffs = b.map((value, i) => value - a[i]);
  const up = diffs.filter((d) => d > 0).length;
  const down = diffs.filter((d) => d < 0).length;
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const [low, high] = bootstrap(diffs);
  console.log(`${set}: R@5 ${mean(a).toFixed(3)} → ${mean(b).toFixed(3)} (${(mean(diffs) >= 0 ? "+" : "") + mean(diffs).toFixed(3)}); questions up ${up}, down ${down}; sign test p ${signTest(up, down).toFixed(3)}; 95% bootstrap [${low.toFixed(3)}, ${high.toFixed(3)}]`);
}
