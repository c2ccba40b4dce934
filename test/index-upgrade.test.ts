import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { run, sql } from "../src/db/store";
import { runCli } from "./helpers/cli";
import { dropDatabaseFor } from "./helpers/database";
import { startTestServer, tempDir } from "./helpers/server";

const dir = tempDir("mnemo-upgrade-");
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await dropDatabaseFor(dir);
});

const layout = async () => {
  const result = await runCli(["doctor", "--json", "--data", dir], { NO_COLOR: "1" });
  return JSON.parse(result.stdout).checks.find((c: { name: string }) => c.name === "index layout");
};

test("an index of an older layout: doctor says so and what happens; the next start rebuilds it, and searches stay complete", async () => {
  const first = await startTestServer({ dataDir: dir });
  const [, memory] = await first.call("POST", "/v1/memories", { body: { content: "the allotment gate code is 4711" } });
  await first.services.indexer.drain();
  expect((await layout()).status).toBe("ok");
  // As an older Mnemo would have left it.
  await run(first.services.store.db, sql`UPDATE settings SET value = '6' WHERE key = 'index_schema'`);
  await first.stop();

  expect(await layout()).toMatchObject({
    status: "warn",
    detail: expect.stringContaining("version 6"),
    hint: expect.stringContaining("mnemo reindex"),
  });
  const second = await startTestServer({ dataDir: dir });
  // Found at once, rebuilt or not: every source is pending until the writer has indexed it again.
  const [, found] = await second.call("POST", "/v1/memories/search", { body: { query: "allotment gate" } });
  expect(found.results.map((r: { id: string }) => r.id)).toEqual([memory.id]);
  await second.services.indexer.drain();
  await second.stop();
  expect((await layout()).status).toBe("ok");
});
