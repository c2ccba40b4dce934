import type { Config } from "../../config";

/** How a process reaches the index: a directory or `s3://…`, object-storage options, refresh interval. */
export interface LanceLocation {
  uri: string;
  storageOptions?: Record<string, string>;
  /** Seconds between checks for versions written by another process (undefined: never). */
  readConsistencySeconds?: number;
}

/**
 * Where the search index lives: a directory (the data dir's `index`, or one on a shared
 * filesystem that every replica mounts) or S3-compatible object storage. A process
 * that does not write the index looks for new versions every `readConsistencyMs`.
 */
export function indexLocation(config: Config): LanceLocation {
  const { uri, s3, readConsistencyMs } = config.index;
  const storageOptions: Record<string, string> = {};
  if (uri.startsWith("s3://")) {
    if (s3.endpoint) {
      storageOptions.aws_endpoint = s3.endpoint;
      if (s3.endpoint.startsWith("http://")) storageOptions.allow_http = "true";
      // Self-hosted S3 (MinIO, a test server) answers on the path, not a bucket subdomain.
      storageOptions.aws_virtual_hosted_style_request = "false";
    }
    if (s3.region) storageOptions.aws_region = s3.region;
    if (s3.accessKeyId) storageOptions.aws_access_key_id = s3.accessKeyId;
    if (s3.secretAccessKey) storageOptions.aws_secret_access_key = s3.secretAccessKey;
    Object.assign(storageOptions, s3.options);
  }
  return {
    uri,
    storageOptions: Object.keys(storageOptions).length ? storageOptions : undefined,
    readConsistencySeconds: readConsistencyMs / 1000,
  };
}
