/**
 * The crash loop (docs/reliability.md#crash-loop) on one server (see lib/crash-loop.ts for what is written
 * and checked): SIGKILL at random moments under 8 writers, restart, nothing
 * acknowledged lost, nothing deleted back, counts agree, the index catches up.
 * Reduced: 5 kills; `npm run stress`: 50. The kill moments replay with MNEMO_FUZZ_SEED.
 */
import { afterAll, describe, test } from "bun:test";
import { rmSync } from "node:fs";
import { dropDatabaseFor } from "../helpers/database";
import { tempDir } from "../helpers/server";
import { createCrashLoop } from "./lib/crash-loop";
import { BACKEND, SEED, sized } from "./lib/mode";
import { killChildren } from "./lib/server-process";

const KILLS = sized("MNEMO_CRASH_KILLS", 5, 50);
const dataDir = tempDir("mnemo-crash-");

afterAll(async () => {
  killChildren();
  rmSync(dataDir, { recursive: true, force: true });
  await dropDatabaseFor(dataDir);
});

describe(`crash loop (${KILLS} SIGKILLs under 8 writers, ${BACKEND}, seed ${SEED})`, () => {
  test("no acknowledged write lost, nothing deleted returns, counts agree, the index catches up", async () => {
    await createCrashLoop(SEED).run({ dataDir, kills: KILLS });
  }, 900_000);
});
