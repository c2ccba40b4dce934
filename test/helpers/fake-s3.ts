import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import S3rver from "s3rver";
import { tempDir } from "./server";

const BUCKET = "mnemo-index";

/**
 * A real local S3 server (s3rver) with one bucket, standing in for S3, MinIO or R2.
 * `env(uri, endpoint)` is the configuration that puts a server's index there (the
 * endpoint may be a proxy in front of it).
 */
export async function startFakeS3(prefix = "mnemo-s3-") {
  const dir = tempDir(prefix);
  const s3 = new S3rver({
    port: 0,
    address: "127.0.0.1",
    silent: true,
    directory: dir,
    configureBuckets: [{ name: BUCKET, configs: [] }],
  });
  const { port } = await s3.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    port,
    endpoint,
    env: (uri = `s3://${BUCKET}/team-a`, via = endpoint) => ({
      MNEMO_INDEX_URI: uri,
      MNEMO_S3_ENDPOINT: via,
      MNEMO_S3_REGION: "us-east-1",
      MNEMO_S3_ACCESS_KEY_ID: "S3RVER",
      MNEMO_S3_SECRET_ACCESS_KEY: "S3RVER",
      // s3rver lists keys out of order, unlike S3, MinIO or R2; LanceDB's newer manifest
      // naming relies on ordered listings to find the latest version, the older does not.
      MNEMO_S3_OPTIONS: JSON.stringify({ new_table_enable_v2_manifest_paths: "false" }),
    }),
    /** Every object key in the bucket, from the fake server's disk. */
    objectKeys(): string[] {
      const bucket = join(dir, BUCKET);
      return existsSync(bucket) ? readdirSync(bucket, { recursive: true }).map(String) : [];
    },
    async close() {
      await s3.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
export type FakeS3 = Awaited<ReturnType<typeof startFakeS3>>;
