import { Type as T, type Static } from "@sinclair/typebox";

/**
 * The whole runtime configuration, parsed once from the environment (and CLI
 * overrides) and handed down typed. Nothing else in `src/` reads `process.env`.
 */
export const ConfigSchema = T.Object({
  dataDir: T.String({ minLength: 1, description: "MNEMO_DATA_DIR or --data; default ~/.mnemo" }),
  host: T.String({ minLength: 1, description: "MNEMO_HOST or --host; default 127.0.0.1" }),
  port: T.Integer({
    minimum: 0,
    maximum: 65535,
    description: "MNEMO_PORT or --port; default 8787; 0 picks a free port",
  }),
  publicUrl: T.Optional(
    T.String({
      pattern: "^https?://[^/?#]+(/[^?#]*)?$",
      description:
        "MNEMO_PUBLIC_URL: the absolute http(s) URL clients reach this server at (e.g. behind a reverse proxy); presigned upload URLs are built on it. Unset: the listening address",
    }),
  ),
  allowMockTokens: T.Boolean({
    description: "MNEMO_ALLOW_MOCK_TOKENS=1 or --allow-mock-tokens: accept mock-token-<uid> (local testing only)",
  }),
  allowPublicMockTokens: T.Boolean({
    description:
      "MNEMO_ALLOW_PUBLIC_MOCK_TOKENS=1 or --allow-public-mock-tokens: let a server that accepts mock tokens listen on a non-loopback address",
  }),
  logLevel: T.Union([T.Literal("debug"), T.Literal("info"), T.Literal("warn"), T.Literal("error")], {
    description: "MNEMO_LOG_LEVEL: debug, info (default), warn or error",
  }),
  storage: T.Object({
    provider: T.Union([T.Literal("local"), T.Literal("memory"), T.Literal("kv"), T.Literal("backend")], {
      description:
        "STORAGE_PROVIDER: unset/local/kv = the data dir; memory = a temporary data dir removed on exit; backend = PostgreSQL (needs MNEMO_DATABASE_URL)",
    }),
    databaseUrl: T.Optional(
      T.String({
        pattern: "^postgres(ql)?://",
        expected: "a postgres:// or postgresql:// URL",
        description: "MNEMO_DATABASE_URL: postgres://… for the shared store of record; unset = SQLite in the data dir",
      }),
    ),
    databasePoolSize: T.Integer({
      minimum: 1,
      maximum: 1000,
      description: "MNEMO_DATABASE_POOL: PostgreSQL connections per process",
    }),
    purgeWithinMs: T.Integer({
      minimum: 100,
      description:
        "MNEMO_PURGE_WITHIN_MS: deleted text leaves the data dir's files (SQLite and its WAL, the search index) within this long; default 60000",
    }),
  }),
  index: T.Object({
    uri: T.String({
      minLength: 1,
      description:
        "MNEMO_INDEX_URI: a directory (default <data>/index, or one on a shared filesystem) or s3://bucket/prefix",
    }),
    s3: T.Object({
      endpoint: T.Optional(
        T.String({ description: "MNEMO_S3_ENDPOINT: an S3-compatible endpoint (MinIO, R2, a local test server)" }),
      ),
      region: T.Optional(T.String({ description: "MNEMO_S3_REGION (or AWS_REGION)" })),
      accessKeyId: T.Optional(T.String({ description: "MNEMO_S3_ACCESS_KEY_ID (or AWS_ACCESS_KEY_ID)" })),
      secretAccessKey: T.Optional(T.String({ description: "MNEMO_S3_SECRET_ACCESS_KEY (or AWS_SECRET_ACCESS_KEY)" })),
      options: T.Record(T.String(), T.String(), {
        description: "MNEMO_S3_OPTIONS: a JSON object of further LanceDB storage options (e.g. timeouts)",
      }),
    }),
    readConsistencyMs: T.Integer({
      minimum: 0,
      description:
        "MNEMO_INDEX_REFRESH_MS: how often a replica that does not write the index looks for new index versions",
    }),
    writer: T.Union([T.Literal("auto"), T.Literal("never")], {
      description:
        "MNEMO_INDEX_WRITER: auto (a replica takes the index writer's lease when it is free) or never (a replica that only serves)",
    }),
  }),
  idp: T.Object({
    projectId: T.Optional(
      T.String({ description: "IDP_PROJECT_ID: audience, and issuer https://securetoken.google.com/<id>" }),
    ),
    jwksUrl: T.Optional(
      T.String({ description: "IDP_JWKS_URL: where the identity provider publishes its signing keys" }),
    ),
    jwksFile: T.Optional(T.String({ description: "IDP_JWKS_FILE: a local JWKS file instead of a URL" })),
  }),
  embeddings: T.Object({
    provider: T.Union([T.Literal("none"), T.Literal("openai"), T.Literal("local")], {
      description: "EMBEDDINGS_PROVIDER",
    }),
    url: T.Optional(T.String({ description: "EMBEDDINGS_URL: base URL of an OpenAI-compatible API (…/v1)" })),
    model: T.Optional(T.String({ description: "EMBEDDINGS_MODEL: model name sent to the openai provider" })),
    apiKey: T.Optional(T.String({ description: "EMBEDDINGS_API_KEY: bearer key for the openai provider" })),
    localModel: T.String({ description: "MNEMO_LOCAL_MODEL: all-MiniLM-L6-v2 (default) or bge-small-en-v1.5" }),
    modelsDir: T.String({ description: "MNEMO_MODELS_DIR; default <data>/models" }),
    hubUrl: T.Optional(T.String({ description: "MNEMO_MODEL_HUB: base URL of the model hub" })),
    autoDownload: T.Boolean({ description: "MNEMO_MODEL_DOWNLOAD=0 disables download on first use" }),
    modelPins: T.Boolean({
      description:
        "MNEMO_MODEL_PINS=off skips the pinned hashes of known model files (for one's own export of a model); default on",
    }),
    timeoutMs: T.Integer({ minimum: 1, description: "EMBEDDINGS_TIMEOUT_MS: per request to the openai provider" }),
  }),
  indexer: T.Object({
    batchSize: T.Integer({ minimum: 1, description: "MNEMO_INDEX_BATCH: outbox rows per LanceDB commit" }),
    maxFragments: T.Integer({ minimum: 2, description: "MNEMO_INDEX_MAX_FRAGMENTS: compact when a table has more" }),
    maxUnindexedRows: T.Integer({
      minimum: 1,
      description:
        "MNEMO_INDEX_MAX_UNINDEXED_ROWS: compact a table once this many of its rows, and a tenth of them, are outside its full-text index",
    }),
    idleOptimizeMs: T.Integer({
      minimum: 0,
      description: "MNEMO_INDEX_IDLE_OPTIMIZE_MS: compact what was written after this long without index writes",
    }),
    vectorIndexMinRows: T.Integer({
      minimum: 1,
      description: "MNEMO_VECTOR_INDEX_MIN_ROWS: build the ANN index past this many vectors",
    }),
    indexCacheMb: T.Integer({
      minimum: 16,
      description: "MNEMO_INDEX_CACHE_MB: LanceDB index cache (metadata cache is a quarter of it)",
    }),
    maxOpenTables: T.Integer({
      minimum: 2,
      description: "MNEMO_INDEX_OPEN_TABLES: index table handles kept open (least recently used closed first)",
    }),
    embeddingCacheMax: T.Integer({
      minimum: 1,
      description:
        "MNEMO_EMBEDDING_CACHE_MAX: stored document vectors kept for re-use (least recently used removed first)",
    }),
  }),
  encryption: T.Object({
    masterKey: T.Optional(
      T.String({
        description:
          "SERVER_MASTER_KEY: 32 bytes (64 hex or base64) sealing escrowed client keys; required with PostgreSQL, else <data>/master.key (never logged)",
      }),
    ),
    proxyMode: T.Boolean({
      description:
        "MNEMO_PROXY_ENCRYPTION=1: encrypt every payload write with the caller's resolved client key (reverse-proxy mode)",
    }),
  }),
  webhooks: T.Object({
    syncId: T.Optional(
      T.String({
        minLength: 1,
        description:
          "WEBHOOK_ID_SYNC: the id of POST /api/v1/webhooks/:id/sync that syncs a signed-in user; unset = disabled",
      }),
    ),
    onboardingId: T.Optional(
      T.String({
        minLength: 1,
        description: "WEBHOOK_ID_ONBOARDING: the id of the onboarding webhook; unset = disabled",
      }),
    ),
  }),
  files: T.Object({
    maxFileBytes: T.Integer({
      minimum: 1,
      description: "MNEMO_MAX_FILE_BYTES: the largest file (presigned PUT or upload session); default 100 MB",
    }),
    blobsUri: T.String({
      minLength: 1,
      description:
        "MNEMO_BLOBS_URI: where file bytes live (LanceDB); default <data>/blobs, or <index uri>-blobs when MNEMO_INDEX_URI is set",
    }),
    orphanSweepMs: T.Integer({
      minimum: 0,
      description:
        "MNEMO_BLOB_SWEEP_MS: how often file bytes no file points at are looked for and removed (0: never); default 6 h",
    }),
    orphanAgeMs: T.Integer({
      minimum: 0,
      description:
        "MNEMO_BLOB_ORPHAN_AGE_MS: file bytes younger than this are never swept (an upload may be committing); default 24 h",
    }),
  }),
  completions: T.Object({
    gatewayUrl: T.String({
      pattern: "^https?://",
      expected: "an http:// or https:// URL",
      description:
        "LLM_GATEWAY_URL: base URL of the OpenAI-compatible upstream (…/v1); default http://127.0.0.1:11434/v1 (Ollama)",
    }),
    gatewayApiKey: T.Optional(
      T.String({ description: "LLM_GATEWAY_API_KEY: bearer key sent upstream (never logged)" }),
    ),
    gatewayTimeoutMs: T.Integer({
      minimum: 1,
      description:
        "LLM_GATEWAY_TIMEOUT_MS: until the upstream's reply (non-streaming) or its response headers (streaming); default 120000",
    }),
    defaultModel: T.String({
      minLength: 1,
      description: "DEFAULT_MODEL: used when a completion names no model; default llama3.2",
    }),
    models: T.Array(T.Object({ id: T.String({ minLength: 1 }), owned_by: T.String({ minLength: 1 }) }), {
      description: "MNEMO_MODELS: the curated list, `owner=id,owner=id`",
    }),
    monthlyTokenLimit: T.Integer({
      minimum: 0,
      description:
        "MONTHLY_TOKEN_LIMIT: tokens per user per UTC month unless overridden (mnemo usage set-limit); default 1000000",
    }),
    memoryWindowMs: T.Integer({
      minimum: 0,
      maximum: 60_000,
      description: "MNEMO_MEMORY_WINDOW_MS: the retrieval budget before going upstream without memories; default 800",
    }),
    completionReserveTokens: T.Integer({
      minimum: 1,
      description:
        "MNEMO_COMPLETION_RESERVE_TOKENS: completion tokens held from the monthly quota for a request without max_tokens; default 1024",
    }),
    rateLimitPerKeyPerMinute: T.Integer({
      minimum: 1,
      description: "MNEMO_RATE_LIMIT_KEY_PER_MINUTE: completions per credential per sliding minute; default 60",
    }),
    rateLimitPerPrincipalPerHour: T.Integer({
      minimum: 1,
      description: "MNEMO_RATE_LIMIT_PRINCIPAL_PER_HOUR: completions per user per sliding hour; default 600",
    }),
    memoryModel: T.Optional(
      T.String({
        minLength: 1,
        description:
          "MNEMO_MEMORY_MODEL: the gateway model that extracts memories from conversations; default DEFAULT_MODEL",
      }),
    ),
    extractionRetryMs: T.Integer({
      minimum: 0,
      description:
        "MNEMO_EXTRACTION_RETRY_MS: the first wait before a failed extraction job is retried (then 4× each time, 5 attempts); default 5000",
    }),
    extractionInProxyMode: T.Boolean({
      description:
        "MNEMO_EXTRACTION_IN_PROXY_MODE=1: allow memory extraction in reverse-proxy encryption mode (extracted memories are stored in plaintext); default off",
    }),
  }),
});
export type Config = Static<typeof ConfigSchema>;

/** Settings the CLI may override on top of the environment. */
export type ConfigOverrides = Partial<
  Pick<Config, "dataDir" | "host" | "port" | "allowMockTokens" | "allowPublicMockTokens" | "logLevel">
> & {
  storage?: Partial<Config["storage"]>;
  index?: Partial<Config["index"]>;
  embeddings?: Partial<Config["embeddings"]>;
  indexer?: Partial<Config["indexer"]>;
  completions?: Partial<Config["completions"]>;
  files?: Partial<Config["files"]>;
};
