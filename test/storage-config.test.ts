import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { openStoreFor } from "../src/db/open";
import { first, run, sql } from "../src/db/store";
import { killSpawnedServers, runCli, spawnServer } from "./helpers/cli";
import { databaseUrlFor, dropDatabaseFor } from "./helpers/database";
import { startTestServer, tempDir } from "./helpers/server";

afterEach(killSpawnedServers);

describe("the store of record's schema", () => {
  test("a server refuses a store written by a newer Mnemo, says why, and changes nothing", async () => {
    const dir = tempDir("mnemo-schema-");
    const server = await startTestServer({ dataDir: dir });
    await server.call("POST", "/v1/memories", { body: { content: "written before the downgrade" } });
    await server.stop();

    const store = openStoreFor({ databaseUrl: await databaseUrlFor(dir) }, dir);
    await run(store.db, sql`INSERT INTO schema_migrations (id, applied_at) VALUES ('9999_from_the_future', 'x')`);
    await store.close();

    const refused = await runCli(["serve", "--data", dir, "--port", "0"]);
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stderr).toContain("schema version 9999_from_the_future, newer than this Mnemo knows; upgrade Mnemo");
    expect(refused.stderr).not.toContain("    at ");

    const after = openStoreFor({ databaseUrl: await databaseUrlFor(dir) }, dir);
    const count = await first<{ n: number }>(after.db, sql`SELECT COUNT(*) AS n FROM memories`);
    expect(Number(count?.n)).toBe(1);
    await after.close();
    rmSync(dir, { recursive: true, force: true });
    await dropDatabaseFor(dir);
  });
});

describe("STORAGE_PROVIDER", () => {
  test("backend without MNEMO_DATABASE_URL stops the start with a message naming the variable", async () => {
    const result = await runCli(["serve", "--port", "0", "--data", tempDir()], {
      STORAGE_PROVIDER: "backend",
      MNEMO_DATABASE_URL: "",
    });
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain("STORAGE_PROVIDER=backend needs MNEMO_DATABASE_URL");
  });

  test("memory is an ephemeral server: it says so, keeps data while it runs, and removes it on stop", async () => {
    const { proc, url, stderr } = await spawnServer(["--allow-mock-tokens"], {
      STORAGE_PROVIDER: "memory",
      MNEMO_DATABASE_URL: "",
      MNEMO_LOG_LEVEL: "info",
    });
    const headers = { authorization: "Bearer mock-token-eph", "content-type": "application/json" };
    expect(
      (
        await fetch(`${url}/v1/memories`, {
          method: "POST",
          headers,
          body: JSON.stringify({ content: "gone after stop" }),
        })
      ).status,
    ).toBe(201);
    const found = (await (
      await fetch(`${url}/v1/memories/search`, { method: "POST", headers, body: JSON.stringify({ query: "gone" }) })
    ).json()) as any;
    expect(found.results).toHaveLength(1);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    const log = await stderr();
    expect(log).toContain("STORAGE_PROVIDER=memory: an ephemeral server");
    const dataDir = JSON.parse(/dataDir=("[^"]+")/.exec(log)![1]);
    expect(existsSync(dataDir)).toBe(false);
  });

  test("an invalid MNEMO_DATABASE_URL is refused at start", async () => {
    const result = await runCli(["serve", "--port", "0", "--data", tempDir()], { MNEMO_DATABASE_URL: "mysql://nope" });
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain("MNEMO_DATABASE_URL: 'mysql://nope' is not a postgres:// or postgresql:// URL");
  });
});
