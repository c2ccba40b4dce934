import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { startFakeS3, type FakeS3 } from "./helpers/fake-s3";
import { startTestServer, tempDir } from "./helpers/server";

/**
 * The search index on S3-compatible object storage: a real local S3 server (s3rver)
 * stands in for S3, MinIO or R2. The store of record stays where the suite's backend
 * puts it; only the index moves.
 */
let s3: FakeS3;
beforeAll(async () => {
  s3 = await startFakeS3("mnemo-s3-");
});
afterAll(() => s3.close());

describe("the search index on object storage", () => {
  test("memories are indexed into the bucket, found, and found again by a restarted server", async () => {
    const dataDir = tempDir();
    const first = await startTestServer({ dataDir, env: s3.env() });
    const [status, created] = await first.call("POST", "/v1/memories", {
      body: { content: "the tide tables for the northern harbour" },
    });
    expect(status).toBe(201);
    const [, found] = await first.call("POST", "/v1/memories/search", { body: { query: "tide tables" } });
    expect(found.results.map((r: { id: string }) => r.id)).toEqual([created.id]);
    const [, health] = await first.call("GET", "/health");
    expect(health.index.uri).toBe("s3://mnemo-index/team-a");
    await first.stop();

    // Nothing of the index is on local disk; the bucket holds its tables.
    expect(existsSync(join(dataDir, "index"))).toBe(false);
    expect(s3.objectKeys().some((key) => /team-a\/mem_[0-9a-f]{32}\.lance/.test(key))).toBe(true);

    const second = await startTestServer({ dataDir, env: s3.env() });
    const [, again] = await second.call("POST", "/v1/memories/search", { body: { query: "northern harbour" } });
    expect(again.results.map((r: { id: string }) => r.id)).toEqual([created.id]);
    const [, deleted] = await second.call("DELETE", `/v1/memories/${created.id}`);
    expect(deleted.deleted).toBe(true);
    const [, gone] = await second.call("POST", "/v1/memories/search", { body: { query: "tide tables" } });
    expect(gone.results).toEqual([]);
    await second.destroy();
  }, 60_000);
});
