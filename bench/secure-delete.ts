/**
 * `bun bench/secure-delete.ts [--memories 20000] [--rounds 3]`: what SQLite's
 * `secure_delete` (on: a deleted row's bytes are zeroed) costs the embedded
 * store. The store of record alone (no index, no HTTP): `--memories` memories of ~600
 * bytes written one per transaction (as the API writes them, group commit included, 8 at a
 * time) and then deleted the same way; and the same rows written and deleted in
 * transactions of 500 (where the per-row CPU cost is not hidden behind fsync). Each round
 * runs secure_delete off and on, alternately, on fresh files.
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { migrateAll } from "../src/migrations";
import { openSqliteStore, run, sql, type Store } from "../src/db/store";
import { inParallel } from "../src/lib/in-parallel";
import { createMemoryRepository } from "../src/memories/repository";
import { cleanup, diskBytes, removeDir, tempDir } from "./lib/harness";
import { machineLine } from "./lib/machine";
import { round, table } from "./lib/stats";

const { values: args } = parseArgs({
  options: { memories: { type: "string", default: "20000" }, rounds: { type: "string", default: "3" } },
});
const N = Number(args.memories);
const ROUNDS = Number(args.rounds);
const BATCH = 500;
const repo = createMemoryRepository();
const text = (i: number) => `memory ${i}: ${"the quick brown fox jumps over the lazy dog ".repeat(14)}`;

/** Wall time of `fn`; its CPU time (user + system, this process: less shaken by a busy machine) is left in `lastCpuMs`. */
async function timedMs(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  const cpu = process.cpuUsage();
  await fn();
  const used = process.cpuUsage(cpu);
  lastCpuMs = (used.user + used.system) / 1000;
  return performance.now() - start;
}
let lastCpuMs = 0;

async function oneRun(secureDelete: boolean): Promise<Record<string, number>> {
  const dir = tempDir("mnemo-bench-secure-delete-");
  const store: Store = await migrateAll(openSqliteStore(join(dir, "mnemo.sqlite")));
  // Every connection of the store turns it on; off here for the comparison.
  if (!secureDelete) await run(store.db, sql`PRAGMA secure_delete = OFF`);
  const now = new Date().toISOString();
  const row = (owner: string, i: number) => ({
    ownerId: owner,
    id: `m${i}`,
    content: text(i),
    metadata: {},
    workspaceId: null,
    sessionId: null,
    createdAt: now,
    updatedAt: now,
  });
  const ids = Array.from({ length: N }, (_, i) => i);
  const cpu: Record<string, number> = {};
  const phase = async (name: string, fn: () => Promise<unknown>) => {
    const wall = await timedMs(fn);
    cpu[name] = lastCpuMs;
    return wall;
  };
  const one = {
    write: await phase("oneWrite", () =>
      inParallel(ids, 8, async (i) => void (await store.transaction((tx) => repo.insert(tx, row("a", i))))),
    ),
    delete: await phase("oneDelete", () =>
      inParallel(ids, 8, async (i) => void (await store.transaction((tx) => repo.delete(tx, "a", `m${i}`)))),
    ),
  };
  const batches = Array.from({ length: Math.ceil(N / BATCH) }, (_, b) => ids.slice(b * BATCH, (b + 1) * BATCH));
  const batched = {
    write: await phase("batchWrite", async () => {
      for (const batch of batches)
        await store.transaction(async (tx) => {
          for (const i of batch) await repo.insert(tx, row("b", i));
        });
    }),
    delete: await phase("batchDelete", async () => {
      for (const batch of batches)
        await store.transaction(async (tx) => {
          for (const i of batch) await repo.delete(tx, "b", `m${i}`);
        });
    }),
  };
  await store.close();
  const bytes = diskBytes(dir);
  removeDir(dir);
  return {
    oneWrite: one.write,
    oneDelete: one.delete,
    batchWrite: batched.write,
    batchDelete: batched.delete,
    bytes,
    ...Object.fromEntries(Object.entries(cpu).map(([name, ms]) => [`cpu:${name}`, ms])),
  };
}

console.log(machineLine());
console.log(`${N} memories of ~${text(0).length} bytes; ${ROUNDS} rounds, secure_delete off and on alternately\n`);
const results: Record<"off" | "on", Array<Record<string, number>>> = { off: [], on: [] };
try {
  for (let r = 0; r < ROUNDS; r++) {
    for (const mode of r % 2 ? (["on", "off"] as const) : (["off", "on"] as const))
      results[mode].push(await oneRun(mode === "on"));
  }
} finally {
  cleanup();
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const rates = (mode: "off" | "on", key: string) => results[mode].map((r) => round(N / (r[key] / 1000), 0));
const spread = (values: number[]) => `${median(values)} (${Math.min(...values)}–${Math.max(...values)})`;
const rows = ["oneWrite", "oneDelete", "batchWrite", "batchDelete"].map((key) => {
  const [off, on] = [rates("off", key), rates("on", key)];
  const label = {
    oneWrite: "write, 1 per transaction",
    oneDelete: "delete, 1 per transaction",
    batchWrite: `write, ${BATCH} per transaction`,
    batchDelete: `delete, ${BATCH} per transaction`,
  }[key];
  return [label, spread(off), spread(on), `${round((median(on) / median(off) - 1) * 100, 1)} %`];
});
console.log(table(["rows/s: median (min–max)", "secure_delete off", "secure_delete on", "change of medians"], rows));
const cpuRows = ["oneWrite", "oneDelete", "batchWrite", "batchDelete"].map((key) => {
  const per = (mode: "off" | "on") => results[mode].map((r) => round((r[`cpu:${key}`] * 1000) / N, 1));
  const [off, on] = [per("off"), per("on")];
  return [key, spread(off), spread(on), `${round((median(on) / median(off) - 1) * 100, 1)} %`];
});
console.log(
  `\n${table(["CPU µs per row: median (min–max)", "secure_delete off", "secure_delete on", "change of medians"], cpuRows)}`,
);
console.log(
  `\nfile size after: off ${round(median(results.off.map((r) => r.bytes)) / 1e6, 1)} MB, on ${round(median(results.on.map((r) => r.bytes)) / 1e6, 1)} MB`,
);
