/**
 * The search index cannot be written: records are still stored (201), `/health` says
 * the index is failing and why, `mnemo doctor` (another process, reading the store of
 * record) says the same, the log has one warning for the outage rather than one per
 * retry; once writes succeed again the waiting record becomes searchable, `/health` is
 * back to ok and one info line says the outage ended.
 *
 * The fault: the index directory is swapped for a regular file, so every write under it
 * fails with ENOTDIR, also as root (where a read-only chmod stops nothing).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../src/config";
import { createLogger } from "../src/lib/log";
import { startServer } from "../src/server";
import { runCli } from "./helpers/cli";
import { databaseEnvFor } from "./helpers/database";
import { tempDir, withClient, type TestServer } from "./helpers/server";
import { waitUntil } from "./helpers/wait";

let server: TestServer;
/** A second process on the same store of record and index, which does not write the index. */
let replica: TestServer;
const logLines: string[] = [];

beforeAll(async () => {
  const dataDir = tempDir("mnemo-index-failure-");
  const env = { EMBEDDINGS_PROVIDER: "none", ...(await databaseEnvFor(dataDir)) };
  const config = loadConfig({ dataDir, port: 0, allowMockTokens: true, logLevel: "info" }, env);
  server = withClient(await startServer(config, { log: createLogger("info", (line) => logLines.push(line)) }), dataDir);
  replica = withClient(await startServer(config, { log: createLogger("error") }), dataDir);
});
afterAll(async () => {
  await replica?.stop();
  await server?.destroy();
});

const health = async (on = server) => {
  // Any valid token sees the index's details (without one, /health says only status and store).
  const [status, body] = await on.call("GET", "/health");
  expect(status).toBe(200);
  // Memory extraction jobs have their own counts beside the index's (none here); no embedder here.
  const { extractionJobs, vectors, ...rest } = body;
  expect({ extractionJobs, vectors }).toEqual({
    extractionJobs: { pending: 0, running: 0, failed: 0 },
    vectors: "off",
  });
  return rest;
};

/** Polls until `done` holds for what `read` returns, at most about 30 s; returns the last value read. */
const until = <T>(read: () => Promise<T>, done: (value: T) => boolean, what: string) =>
  waitUntil(read, done, { what, everyMs: 100 });

const searchIds = async (query: string): Promise<string[]> => {
  const [status, body] = await server.call("POST", "/v1/memories/search", { body: { query } });
  expect(status).toBe(200);
  return body.results.map((r: { id: string }) => r.id);
};

const logged = (pattern: RegExp) => logLines.filter((line) => pattern.test(line));

describe("the search index cannot be written", () => {
  test("/health reports it with a reason, doctor too, and both recover once writes succeed", async () => {
    const [first, before] = await server.call("POST", "/v1/memories", {
      body: { content: "quokka written while the index works" },
    });
    expect(first).toBe(201);
    expect(await searchIds("quokka")).toEqual([before.id]);
    await server.services.indexer.drain();
    expect(await health()).toEqual({
      status: "ok",
      store: expect.any(String),
      index: expect.objectContaining({
        writer: true,
        status: "ok",
        pending: 0,
        lastError: null,
        failingSince: null,
        consecutiveFailures: 0,
      }),
    });

    const index = join(server.dataDir, "index");
    renameSync(index, `${index}.away`);
    writeFileSync(index, "not a directory");
    let restored = false;
    try {
      const [status, during] = await server.call("POST", "/v1/memories", {
        body: { content: "wombat written while the index fails" },
      });
      expect(status).toBe(201);
      // Past the second failure: retries must not log again.
      const failing = await until(health, (h) => h.index.consecutiveFailures >= 2, "two failed index passes");
      expect(failing).toEqual({
        status: "degraded",
        store: expect.any(String),
        index: expect.objectContaining({
          writer: true,
          status: "failing",
          pending: 1,
          oldestPendingAt: expect.any(String),
          lastError: expect.stringContaining("Not a directory"),
          failingSince: expect.any(String),
          consecutiveFailures: expect.any(Number),
        }),
      });
      expect(logged(/WARN search index writes fail/)).toHaveLength(1);
      // The replica that does not write knows it from the store of record.
      expect(
        await until(
          () => health(replica),
          (h) => h.index.status !== "ok",
          "the replica to report the failing index",
        ),
      ).toEqual({
        status: "degraded",
        store: expect.any(String),
        index: expect.objectContaining({
          writer: false,
          writerId: failing.index.replicaId,
          status: "failing",
          pending: 1,
          lastError: expect.stringContaining("Not a directory"),
          failingSince: failing.index.failingSince,
        }),
      });
      expect(logged(/index write failed|indexer failed/).filter((line) => / (WARN|ERROR) /.test(line))).toEqual([]);

      // Another process sees it in the store of record: the writer recorded the outage.
      const doctor = await runCli(["doctor", "--json", "--data", server.dataDir]);
      const lag = JSON.parse(doctor.stdout).checks.find((c: { name: string }) => c.name === "index lag");
      expect(lag.detail).toContain("Not a directory");
      expect({ exitCode: doctor.exitCode, status: lag.status, detail: lag.detail }).toEqual({
        exitCode: 1,
        status: "fail",
        detail: expect.stringContaining(`index writes fail since ${failing.index.failingSince}: `),
      });

      rmSync(index);
      renameSync(`${index}.away`, index);
      restored = true;
      expect(
        await until(
          () => searchIds("wombat"),
          (ids) => ids.length > 0,
          "the write made during the outage to be found",
        ),
      ).toEqual([during.id]);
      expect(await until(health, (h) => h.status === "ok", "health to be ok again")).toEqual({
        status: "ok",
        store: expect.any(String),
        index: expect.objectContaining({
          writer: true,
          status: "ok",
          pending: 0,
          lastError: null,
          failingSince: null,
          consecutiveFailures: 0,
        }),
      });
      expect(logged(/INFO search index writes recovered/)).toEqual([expect.stringContaining("waiting=1")]);
      expect((await health(replica)).index).toEqual(
        expect.objectContaining({ writer: false, status: "ok", pending: 0, lastError: null }),
      );
      const after = await runCli(["doctor", "--json", "--data", server.dataDir]);
      expect(JSON.parse(after.stdout).checks.find((c: { name: string }) => c.name === "index lag").status).toBe("ok");
    } finally {
      if (!restored) {
        rmSync(index, { force: true });
        renameSync(`${index}.away`, index);
      }
    }
  }, 60_000);
});
