import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { startFakeS3, type FakeS3 } from "./helpers/fake-s3";
import { startTestServer } from "./helpers/server";
import { createWorkspace } from "./helpers/workspaces";

/** Files when the index is on object storage: the blobs go to the same bucket, beside the index (a real local S3 server). */
let s3: FakeS3;
beforeAll(async () => {
  s3 = await startFakeS3("mnemo-s3-files-");
});
afterAll(() => s3.close());

describe("files with the index on object storage", () => {
  test("bytes land in <index uri>-blobs in the bucket and come back whole and by range", async () => {
    const server = await startTestServer({ env: s3.env() });
    try {
      expect(server.services.blobs.uri).toBe("s3://mnemo-index/team-a-blobs");
      const ws = await createWorkspace(server, "S3");
      const bytes = new Uint8Array(2_500_000).map((_, i) => (i * 17) & 0xff);
      const [, issued] = await server.call("POST", `/v1/workspaces/${ws}/files/upload-url`, {
        body: { filename: "s3.bin", contentType: "application/octet-stream" },
      });
      expect(
        (
          await fetch(issued.url, {
            method: "PUT",
            body: bytes,
            headers: { "content-type": "application/octet-stream" },
          })
        ).status,
      ).toBe(201);
      const get = (range?: string) =>
        fetch(`${server.url}/v1/workspaces/${ws}/files/${issued.key}`, {
          headers: { authorization: "Bearer mock-token-alice", ...(range ? { range } : {}) },
        }).then(async (r) => Buffer.from(await r.arrayBuffer()));
      expect(Buffer.compare(await get(), Buffer.from(bytes))).toBe(0);
      expect(Buffer.compare(await get("bytes=1048570-1048599"), Buffer.from(bytes.slice(1048570, 1048600)))).toBe(0);
      expect(s3.objectKeys().some((key) => key.startsWith("team-a-blobs/"))).toBe(true);
      expect(existsSync(join(server.dataDir, "blobs"))).toBe(false);
    } finally {
      await server.destroy();
    }
  });
});
