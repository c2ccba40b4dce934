/**
 * `bun bench/drip.ts [--memories 10000] [--writes 150] [--gap-ms 600]`: one user's server
 * (embedded, a child process, `MNEMO_INDEX_IDLE_OPTIMIZE_MS=300`) holding `--memories`
 * memories, then `--writes` single writes each followed by an idle gap, so that every one
 * is folded into the full-text index by an idle optimize of its own, as in a chat used a
 * message at a time. Prints the server's RSS as the writes go: what the compactions keep.
 */
import { parseArgs } from "node:util";
import { client, ingest } from "./lib/client";
import { cleanup, tempDir } from "./lib/harness";
import { machineLine, treeLine } from "./lib/machine";
import { rssMB } from "./lib/proc";
import { spawnReplica } from "./lib/replicas";

const { values: args } = parseArgs({
  options: {
    memories: { type: "string", default: "10000" },
    writes: { type: "string", default: "150" },
    "gap-ms": { type: "string", default: "600" },
  },
});
const MEMORIES = Number(args.memories);
const WRITES = Number(args.writes);
const GAP_MS = Number(args["gap-ms"]);

console.log(
  `drip: ${MEMORIES} memories, then ${WRITES} single writes ${GAP_MS} ms apart; ${machineLine()}; ${treeLine()}`,
);
const server = await spawnReplica("drip", tempDir("mnemo-drip-"), { MNEMO_INDEX_IDLE_OPTIMIZE_MS: "300" });
try {
  await ingest(
    server.url,
    "drip",
    Array.from({ length: MEMORIES }, (_, i) => `memory ${i} about ferns and ${i % 97} quinces on day ${i % 31}`),
    8,
  );
  await Bun.sleep(5_000);
  const readings = [`${rssMB(server.pid)}`];
  for (let write = 1; write <= WRITES; write++) {
    await client(server.url, "drip").addMemory(`drip ${write} waters the ferns`);
    await Bun.sleep(GAP_MS);
    if (write % Math.ceil(WRITES / 5) === 0) readings.push(`${write}: ${rssMB(server.pid)}`);
  }
  console.log(
    `server RSS (MB) after the ${MEMORIES} memories settled, then after n single writes: ${readings.join(", ")}`,
  );
  await server.stop();
} finally {
  cleanup();
}
