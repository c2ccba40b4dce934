/**
 * `bun bench/many-users.ts [--users 10000] [--clients 8] [--restarts 3] [--idle 40]`: many users on one
 * embedded server. Each user writes one memory (so each has a LanceDB table of their own);
 * then the server is restarted `--restarts` times. Prints the write rate, the index's
 * catch-up, tables and size, the RSS (then again after `--idle` seconds), and for each restart the time to listen, to a first
 * search and to a fresh write found by search; beside them, the index writer's damaged-table
 * check at takeover (`src/search/lance/damaged-tables.ts`) alone in this process, opening the
 * tables one by one and eight at a time.
 */
import * as lancedb from "@lancedb/lancedb";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { inParallel } from "../src/lib/in-parallel";
import { unreadableTables } from "../src/search/lance/damaged-tables";
import { client } from "./lib/client";
import { cleanup, diskBytes, giveUpAfter, tempDir } from "./lib/harness";
import { machineLine, treeLine } from "./lib/machine";
import { childrenRssMB, rssMB } from "./lib/proc";
import { spawnReplica, type Replica } from "./lib/replicas";
import { round, table } from "./lib/stats";

const { values: args } = parseArgs({
  options: {
    users: { type: "string", default: "10000" },
    clients: { type: "string", default: "8" },
    restarts: { type: "string", default: "3" },
    idle: { type: "string", default: "40" },
  },
});
const USERS = Number(args.users);
const CLIENTS = Number(args.clients);
const RESTARTS = Number(args.restarts);
/** Seconds the server is left idle after the catch-up before its RSS is read again (evicted table handles close 30 s after eviction). */
const IDLE_S = Number(args.idle);

async function pending(server: Replica): Promise<number> {
  return (
    (
      (await (
        await fetch(`${server.url}/health`, { headers: { authorization: "Bearer mock-token-bench" } })
      ).json()) as any
    ).index.pending ?? Infinity
  );
}

/** The server's own damaged-table check on the index, `atOnce` tables at a time, alone in this process: its ms. */
async function timeCheck(indexDir: string, atOnce: number): Promise<number> {
  const db = await lancedb.connect(indexDir);
  const started = performance.now();
  const damaged = await unreadableTables(db, atOnce);
  const ms = performance.now() - started;
  db.close();
  if (damaged.length) throw new Error(`damaged tables: ${damaged[0].name}: ${damaged[0].reason}`);
  return ms;
}

giveUpAfter(Math.max(10, USERS / 500), "many-users");
console.log(`many users: ${USERS} users × 1 memory, ${CLIENTS} clients; ${machineLine()}; ${treeLine()}`);
const dataDir = tempDir("mnemo-many-");
try {
  let server = await spawnReplica("many", dataDir, {});
  const writeStart = performance.now();
  const users = Array.from({ length: USERS }, (_, user) => user);
  await inParallel(
    users,
    CLIENTS,
    async (user) =>
      void (await client(server.url, `u${user}`).addMemory(`user ${user} waters the ferns on the balcony`)),
  );
  const writeS = (performance.now() - writeStart) / 1000;
  while ((await pending(server)) > 0) await Bun.sleep(200);
  const caughtUpS = (performance.now() - writeStart) / 1000 - writeS;
  const tables = (await lancedb.connect(join(dataDir, "index")).then((db) => db.tableNames())).length;
  console.log(
    `wrote ${USERS} memories of ${USERS} users in ${round(writeS, 1)} s (${Math.round(USERS / writeS)}/s); the index caught up ${round(caughtUpS, 1)} s later: ` +
      `${tables} tables, ${round(diskBytes(join(dataDir, "index")) / 2 ** 20, 0)} MB; server RSS ${rssMB(server.pid)} MB (its child processes ${childrenRssMB(server.pid)} MB)`,
  );
  await Bun.sleep(IDLE_S * 1000);
  console.log(
    `server RSS after ${IDLE_S} s idle: ${rssMB(server.pid)} MB (its child processes ${childrenRssMB(server.pid)} MB)`,
  );
  await server.stop();

  const rows: Array<Array<string | number>> = [];
  for (let restart = 1; restart <= RESTARTS; restart++) {
    const started = performance.now();
    server = await spawnReplica("many", dataDir, {});
    const listening = performance.now() - started;
    const user = (restart * 7919) % USERS;
    const api = client(server.url, `u${user}`);
    const found = await api.search("ferns");
    const searched = performance.now() - started;
    await api.addMemory(`restart ${restart} planted a quince`);
    const fresh = await api.search(`quince restart ${restart}`);
    const written = performance.now() - started;
    if (found.results.length < 1) throw new Error(`user ${user}'s memory was not found`);
    if (!fresh.results.some((r) => r.content.includes(`restart ${restart}`)))
      throw new Error("the fresh write was not found");
    rows.push([restart, round(listening, 0), round(searched, 0), round(written, 0), rssMB(server.pid)]);
    await server.stop();
  }
  console.log("\nrestarts (ms from spawning `mnemo serve`)");
  console.log(
    table(["restart", "listening", "first search answered", "a fresh write found by search", "RSS MB"], rows),
  );

  const indexDir = join(dataDir, "index");
  const serial = await timeCheck(indexDir, 1);
  const parallel = await timeCheck(indexDir, 8);
  console.log(
    `\nLanceDB alone, every one of the ${tables} tables opened and counted (the writer's damaged-table check at takeover): one by one ${round(serial, 0)} ms, eight at a time ${round(parallel, 0)} ms`,
  );
} finally {
  cleanup();
}
