/**
 * Paired comparison of two recall bench runs on the same sets: per set, the R@5 of each,
 * the questions that went up and down, a two-sided sign test over those, and a 95% paired
 * bootstrap interval of the difference (10,000 resamples of the questions, fixed seed); the
 * same for the multi-hop questions' R@5 and for R@1, when both runs carry them.
 *
 *   bun bench/recall.ts > before.txt; (change); bun bench/recall.ts > after.txt
 *   bun bench/compare-recall.ts before.txt after.txt
 */
import { readFileSync } from "node:fs";

type Figures = { r5: number[]; r1?: number[]; categories?: number[] };
type Run = Map<string, Figures>;

function readRun(path: string): Run {
  const run: Run = new Map();
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (!line.startsWith("RECALL_JSON ")) continue;
    const json = JSON.parse(line.slice("RECALL_JSON ".length)) as Figures & { data: string };
    run.set(json.data.replace(/^.*\/(shared\/bench\/|bench\/)/, ""), {
      r5: json.r5,
      r1: json.r1,
      categories: json.categories,
    });
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
function judge(label: string, a: number[], b: number[]) {
  const diffs = b.map((value, i) => value - a[i]);
  const up = diffs.filter((d) => d > 0).length;
  const down = diffs.filter((d) => d < 0).length;
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / (xs.length || 1);
  const [low, high] = bootstrap(diffs);
  console.log(
    `${label} ${mean(a).toFixed(3)} → ${mean(b).toFixed(3)} (${(mean(diffs) >= 0 ? "+" : "") + mean(diffs).toFixed(3)}); questions up ${up}, down ${down}; sign test p ${signTest(up, down).toFixed(3)}; 95% bootstrap [${low.toFixed(3)}, ${high.toFixed(3)}]`,
  );
}

for (const [set, a] of before) {
  const b = after.get(set);
  if (!b || b.r5.length !== a.r5.length) continue;
  judge(`${set}: R@5`, a.r5, b.r5);
  const categories = a.categories ?? b.categories;
  if (categories) {
    const multiHop = categories.flatMap((category, i) => (category === 1 ? [i] : []));
    if (multiHop.length)
      judge(
        `${set}: multi-hop R@5 (${multiHop.length} q)`,
        multiHop.map((i) => a.r5[i]!),
        multiHop.map((i) => b.r5[i]!),
      );
  }
  if (a.r1 && b.r1) judge(`${set}: R@1`, a.r1, b.r1);
}
