/**
 * The crash loop (docs/reliability.md#crash-loop) on PostgreSQL with two replicas (one database, one index dir): the crash
 * loop of lib/crash-loop.ts, killing either replica, and every other round the one that
 * holds the index writer lease, so the other must take the lease over and the index
 * still catch up. PostgreSQL only. Reduced: 2 kills; `npm run stress`: 20.
 */
import { afterAll, describe, test } from "bun:test";
import { rmSync } from "node:fs";
import { dropDatabaseFor } from "../helpers/database";
import { tempDir } from "../helpers/server";
import { createCrashLoop } from "./lib/crash-loop";
import { BACKEND, SEED, sized } from "./lib/mode";
import { killChildren } from "./lib/server-process";

const KILLS = sized("MNEMO_CRASH_REPLICA_KILLS", 2, 20);
const dataDir = tempDir("mnemo-crash-replicas-");

afterAll(async () => {
  killChildren();
  rmSync(dataDir, { recursive: true, force: true });
  await dropDatabaseFor(dataDir);
});

describe(`crash loop, two replicas (${KILLS} SIGKILLs, ${BACKEND}, seed ${SEED})`, () => {
  test.skipIf(BACKEND !== "postgres")(
    "either replica or the index writer killed: nothing lost, the survivor takes over the index",
    async () => {
      await createCrashLoop(SEED).run({ dataDir, kills: KILLS, replicas: 2 });
    },
    900_000,
  );
});
