import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import S3rver from "s3rver";
import { startTestServer, tempDir } from "./helpers/server";
import { createWorkspace } from "./helpers/workspaces";

/** Files when the index is on object storage: the blobs go to the same bucket, beside the index (a real local S3 server). */
const bucketDir = tempDir("mnemo-s3-files-");
let s3: S3rver;
let endpoint = "";

beforeAll(async () => {
  s3 = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory: bucketDir, configureBuckets: [{ name: "mnemo-index", configs: [] }] });
  endpoint = `http://127.0.0.1:${(await s3.run()).port}`;
});
afterAll(async () => {
  await s3.close();
  rmSync(bucketDir, { recursive: true, force: true });
});

describe("files with the index on object storage", () => {
  test("bytes land in <index uri>-blobs in the bucket and come back whole and by range", async () => {
    const server = await startTestServer({
      env: {
        MNEMO_INDEX_URI: "s3://mnemo-index/team-a",
        MNEMO_S3_ENDPOINT: endpoint,
        MNEMO_S3_REGION: "us-east-1",
        MNEMO_S3_ACCESS_KEY_ID: "S3RVER",
        MNEMO_S3_SECRET_ACCESS_KEY: "S3RVER",
        MNEMO_S3_OPTIONS: JSON.stringify({ new_table_enable_v2_manifest_paths: "false" }),
      },
    });
    try {
      expect(server.services.blobs.uri).toBe("s3://mnemo-index/team-a-blobs");
      const ws = await createWorkspace(server, "S3");
      const bytes = new Uint8Array(2_500_000).map((_, i) => (i * 17) & 0xff);
      const [, issued] = await server.call("POST", `/v1/workspaces/${ws}/files/upload-url`, { body: { filename: "s3.bin", contentType: "application/octet-stream" } });
      expect((await fetch(issued.url, { method: "PUT", body: bytes, headers: { "content-type": "application/octet-stream" } })).status).toBe(201);
      const get = (range?: string) =>
        fetch(`${server.url}/v1/workspaces/${ws}/files/${issued.key}`, { headers: { authorization: "Bearer mock-token-alice", ...(range ? { range } : {}) } })
          .then(async (r) => Buffer.from(await r.arrayBuffer()));
      expect(Buffer.compare(await get(), Buffer.from(bytes))).toBe(0);
      expect(Buffer.compare(await get("bytes=1048570-1048599"), Buffer.from(bytes.slice(1048570, 1048600)))).toBe(0);
      const keys = existsSync(join(bucketDir, "mnemo-index")) ? readdirSync(join(bucketDir, "mnemo-index"), { recursive: true }).map(String) : [];
      expect(keys.some((key) => key.startsWith("team-a-blobs/"))).toBe(true);
      expect(existsSync(join(server.dataDir, "blobs"))).toBe(false);
    } finally {
      await server.destroy();
    }
  });
});
