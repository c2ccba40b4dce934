import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import S3rver from "s3rver";
import { startTestServer, tempDir } from "./helpers/server";

/**
 * The search index on S3-compatible object storage: a real local S3 server (s3rver)
 * stands in for S3, MinIO or R2. The store of record stays where the suite's backend
 * puts it; only the index moves.
 */
const bucketDir = tempDir("mnemo-s3-");
let s3: S3rver;
let endpoint = "";

beforeAll(async () => {
  s3 = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory: bucketDir, configureBuckets: [{ name: "mnemo-index", configs: [] }] });
  const { port } = await s3.run();
  endpoint = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  await s3.close();
  rmSync(bucketDir, { recursive: true, force: true });
});

const s3Env = () => ({
  MNEMO_INDEX_URI: "s3://mnemo-index/team-a",
  MNEMO_S3_ENDPOINT: endpoint,
  MNEMO_S3_REGION: "us-east-1",
  MNEMO_S3_ACCESS_KEY_ID: "S3RVER",
  MNEMO_S3_SECRET_ACCESS_KEY: "S3RVER",
  // s3rver lists keys out of order, unlike S3, MinIO or R2; LanceDB's newer manifest
  // naming relies on ordered listings to find the latest version, the older does not.
  MNEMO_S3_OPTIONS: JSON.stringify({ new_table_enable_v2_manifest_paths: "false" }),
});

/** Every object key under a bucket's directory on the fake server's disk. */
function objectKeys(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true }).map(String);
}

describe("the search index on object storage", () => {
  test("memories are indexed into the bucket, found, and found again by a restarted server", async () => {
    const dataDir = tempDir();
    const first = await startTestServer({ dataDir, env: s3Env() });
    const [status, created] = await first.call("POST", "/v1/memories", { body: { content: "the tide tables for the northern harbour" } });
    expect(status).toBe(201);
    const [, found] = await first.call("POST", "/v1/memories/search", { body: { query: "tide tables" } });
    expect(found.results.map((r: { id: string }) => r.id)).toEqual([created.id]);
    const [, health] = await first.call("GET", "/health", { token: null });
    expect(health.index.uri).toBe("s3://mnemo-index/team-a");
    await first.stop();

    // Nothing of the index is on local disk; the bucket holds its tables.
    expect(existsSync(join(dataDir, "index"))).toBe(false);
    expect(objectKeys(join(bucketDir, "mnemo-index")).some((key) => /team-a\/mem_[0-9a-f]{32}\.lance/.test(key))).toBe(true);

    const second = await startTestServer({ dataDir, env: s3Env() });
    const [, again] = await second.call("POST", "/v1/memories/search", { body: { query: "northern harbour" } });
    expect(again.results.map((r: { id: string }) => r.id)).toEqual([created.id]);
    const [, deleted] = await second.call("DELETE", `/v1/memories/${created.id}`);
    expect(deleted.deleted).toBe(true);
    const [, gone] = await second.call("POST", "/v1/memories/search", { body: { query: "tide tables" } });
    expect(gone.results).toEqual([]);
    await second.destroy();
  }, 60_000);
});
