import { Type as T, type Static, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { mkdtempSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";

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

type Env = Record<string, string | undefined>;

const flag = (value: string | undefined) => value === "1" || value === "true" || value === "yes";

function parseJsonObject(name: string, value: string | undefined): Record<string, string> {
  if (!value) return {};
  try {
    const parsed = JSON.parse(value);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed))
      return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, String(v)]));
  } catch {}
  throw new ConfigError(`${name} must be a JSON object of strings, e.g. {"timeout":"60s"}`);
}

/** The curated models list (several providers); `MNEMO_MODELS=owner=id,owner=id` replaces it. */
const DEFAULT_MODELS =
  "meta=llama3.2,openai=gpt-4o-mini,openai=gpt-4.1-mini,anthropic=claude-3-5-haiku-latest,google=gemini-2.0-flash,mistralai=mistral-small-latest";

function parseModelList(value: string | undefined): Array<{ id: string; owned_by: string }> {
  return (value || DEFAULT_MODELS)
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const at = entry.indexOf("=");
      if (at <= 0 || at === entry.length - 1) throw new ConfigError(`MNEMO_MODELS: '${entry}' is not owner=id`);
      return { owned_by: entry.slice(0, at), id: entry.slice(at + 1) };
    });
}

/** File bytes beside a moved index (`<index uri>-blobs`, so every replica reaches them), else `<data>/blobs`. */
const blobsBeside = (indexUri: string | undefined, dataDir: string) =>
  indexUri ? `${indexUri.replace(/\/+$/, "")}-blobs` : join(dataDir, "blobs");

/** MNEMO_PUBLIC_URL without a trailing slash; anything but an absolute http(s) URL (no query, fragment or credentials) is refused. */
function parsePublicUrl(value: string | undefined): string | undefined {
  if (!value) return undefined;
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {}
  if (
    !url ||
    !/^https?:$/.test(url.protocol) ||
    url.search ||
    url.hash ||
    url.username ||
    url.password ||
    value.includes("?") ||
    value.includes("#")
  ) {
    throw new Error(
      "MNEMO_PUBLIC_URL must be an absolute http(s) URL such as https://mnemo.example.com (no query, fragment or credentials)",
    );
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, "");
}

/** Resolves the data dir the same way for the server and every CLI command. */
export function resolveDataDir(cliValue: string | undefined, env: Env = process.env): string {
  return resolve(cliValue ?? env.MNEMO_DATA_DIR ?? join(homedir(), ".mnemo"));
}

/** The local embedding models' dir: MNEMO_MODELS_DIR, else `<data dir>/models`. */
export function modelsDirFor(dataDir: string, env: Env = process.env): string {
  return resolve(env.MNEMO_MODELS_DIR || join(dataDir, "models"));
}

/** MNEMO_MODEL_HUB: where local models are downloaded from, when set. */
export const modelHubUrl = (env: Env = process.env) => env.MNEMO_MODEL_HUB || undefined;

/** MNEMO_MODEL_PINS: whether model files are checked against the pinned hashes (on unless `off`, `0` or `false`). */
export const modelPinsEnabled = (env: Env = process.env) =>
  !["off", "0", "false"].includes((env.MNEMO_MODEL_PINS ?? "").toLowerCase());

/**
 * The store of record for CLI commands that read only the environment (keys, tokens):
 * the data dir, and PostgreSQL when MNEMO_DATABASE_URL names it (with a small pool).
 * The URL is checked as `loadConfig` checks it, so a mistyped one is named instead of
 * failing as a DNS error; its password is never echoed.
 */
export function recordStoreConfig(dataDirOption?: string, env: Env = process.env) {
  const dataDir = resolveDataDir(dataDirOption, env);
  const databaseUrl = env.MNEMO_DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError(
      `MNEMO_DATABASE_URL: '${databaseUrl.replace(/\/\/[^/@\s]*@/, "//…@")}' is not a postgres:// or postgresql:// URL`,
    );
  }
  return { dataDir, storage: { databaseUrl, databasePoolSize: 2 } };
}

/** A configuration the operator must fix: the message names the variable (or flag) and what it takes. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

/** Overrides given as CLI flags: an error in one names the flag, not the variable. */
const FLAG_OVERRIDES = ["dataDir", "host", "port", "allowMockTokens", "logLevel"] as const;

/** The schema node at a TypeBox error path (`/indexer/batchSize`), with the nearest description on the way. */
function describedSchemaAt(path: string): { schema: TSchema; description: string } {
  let schema: TSchema = ConfigSchema;
  let description = "";
  for (const segment of path.split("/").filter(Boolean)) {
    const next = schema.properties?.[segment] ?? (schema.type === "array" ? schema.items : undefined);
    if (!next) break;
    schema = next;
    if (typeof schema.description === "string") description = schema.description;
  }
  return { schema, description };
}

/** What a schema node takes, in words: `a whole number from 0 to 65535`, `one of: debug, info`. */
function expectation(schema: TSchema): string {
  if (schema.expected) return schema.expected;
  if (schema.type === "integer" || schema.type === "number") {
    const { minimum: min, maximum: max } = schema;
    return `a whole number${min !== undefined && max !== undefined ? ` from ${min} to ${max}` : min !== undefined ? ` of at least ${min}` : max !== undefined ? ` of at most ${max}` : ""}`;
  }
  if (Array.isArray(schema.anyOf) && schema.anyOf.every((s: TSchema) => "const" in s))
    return `one of: ${schema.anyOf.map((s: TSchema) => s.const).join(", ")}`;
  if (schema.type === "string" && schema.minLength) return "a non-empty value";
  return `a valid ${schema.type ?? "value"}`;
}

/** A value safe to echo in an error: never a secret, never a URL's password. */
function shownValue(name: string, value: unknown): string {
  if (/KEY|SECRET|TOKEN|PASSWORD/.test(name)) return "the value given";
  return `'${String(value).replace(/\/\/[^/@\s]*@/, "//…@")}'`;
}

/**
 * The first schema violation as one line naming what the operator set: the environment
 * variable (from the field's description, e.g. `MNEMO_PORT`) or the CLI flag it came from.
 */
function configError(config: unknown, overrides: ConfigOverrides, env: Env): ConfigError | null {
  const error = Value.Errors(ConfigSchema, config).First();
  if (!error) return null;
  const { schema, description } = describedSchemaAt(error.path);
  const variable = /^[A-Z][A-Z0-9_]+/.exec(description)?.[0];
  const field = error.path.split("/")[1] as (typeof FLAG_OVERRIDES)[number];
  const overridden = FLAG_OVERRIDES.includes(field) && overrides[field] !== undefined;
  const flag = overridden ? /--[a-z][a-z-]*/.exec(description)?.[0] : undefined;
  const name = flag ?? variable ?? `configuration ${error.path}`;
  const raw = overridden || !variable || env[variable] === undefined ? error.value : env[variable];
  return new ConfigError(`${name}: ${shownValue(name, raw)} is not ${expectation(schema)}`);
}

/**
 * Builds and validates the config. Throws a ConfigError naming the offending
 * variable, so a typo in the environment fails at start, not mid-request; nothing is
 * created on disk before the config is valid.
 */
export function loadConfig(overrides: ConfigOverrides = {}, env: Env = process.env): Config {
  const provider = overrides.storage?.provider ?? env.STORAGE_PROVIDER;
  // An ephemeral server: a fresh temporary data dir (made once the rest is valid), removed when the server stops.
  const ephemeral = provider === "memory" && !overrides.dataDir && !env.MNEMO_DATA_DIR;
  const config = buildConfig(
    ephemeral ? join(tmpdir(), "mnemo-memory-XXXXXX") : resolveDataDir(overrides.dataDir, env),
    overrides,
    env,
  );
  if (config.storage.provider === "memory" && config.storage.databaseUrl) {
    throw new ConfigError(
      "STORAGE_PROVIDER=memory keeps everything in a temporary data dir; unset MNEMO_DATABASE_URL or use STORAGE_PROVIDER=backend",
    );
  }
  if (config.storage.provider === "backend" && !config.storage.databaseUrl) {
    throw new ConfigError("STORAGE_PROVIDER=backend needs MNEMO_DATABASE_URL (postgres://…)");
  }
  if (config.embeddings.provider === "openai" && !config.embeddings.url) {
    throw new ConfigError("EMBEDDINGS_URL is required when EMBEDDINGS_PROVIDER=openai");
  }
  const invalid = configError(config, overrides, env);
  if (invalid) throw invalid;
  return ephemeral ? buildConfig(mkdtempSync(join(tmpdir(), "mnemo-memory-")), overrides, env) : config;
}

function buildConfig(dataDir: string, overrides: ConfigOverrides, env: Env): Config {
  const port = overrides.port ?? (env.MNEMO_PORT !== undefined ? Number(env.MNEMO_PORT) : 8787);
  const config = {
    dataDir,
    host: overrides.host ?? env.MNEMO_HOST ?? "127.0.0.1",
    port,
    publicUrl: parsePublicUrl(env.MNEMO_PUBLIC_URL),
    allowMockTokens: overrides.allowMockTokens ?? flag(env.MNEMO_ALLOW_MOCK_TOKENS),
    allowPublicMockTokens: overrides.allowPublicMockTokens ?? flag(env.MNEMO_ALLOW_PUBLIC_MOCK_TOKENS),
    logLevel: overrides.logLevel ?? (env.MNEMO_LOG_LEVEL as Config["logLevel"]) ?? "info",
    storage: {
      provider: (env.STORAGE_PROVIDER || "local") as Config["storage"]["provider"],
      databaseUrl: env.MNEMO_DATABASE_URL || undefined,
      databasePoolSize: env.MNEMO_DATABASE_POOL ? Number(env.MNEMO_DATABASE_POOL) : 10,
      purgeWithinMs: env.MNEMO_PURGE_WITHIN_MS ? Number(env.MNEMO_PURGE_WITHIN_MS) : 60_000,
      ...overrides.storage,
    },
    index: {
      uri: env.MNEMO_INDEX_URI || join(dataDir, "index"),
      s3: {
        endpoint: env.MNEMO_S3_ENDPOINT || undefined,
        region: env.MNEMO_S3_REGION || env.AWS_REGION || undefined,
        accessKeyId: env.MNEMO_S3_ACCESS_KEY_ID || env.AWS_ACCESS_KEY_ID || undefined,
        secretAccessKey: env.MNEMO_S3_SECRET_ACCESS_KEY || env.AWS_SECRET_ACCESS_KEY || undefined,
        options: parseJsonObject("MNEMO_S3_OPTIONS", env.MNEMO_S3_OPTIONS),
      },
      readConsistencyMs: env.MNEMO_INDEX_REFRESH_MS ? Number(env.MNEMO_INDEX_REFRESH_MS) : 1_000,
      writer: (env.MNEMO_INDEX_WRITER || "auto") as Config["index"]["writer"],
      ...overrides.index,
    },
    idp: {
      projectId: env.IDP_PROJECT_ID || undefined,
      jwksUrl: env.IDP_JWKS_URL || undefined,
      jwksFile: env.IDP_JWKS_FILE || undefined,
    },
    embeddings: {
      provider: (env.EMBEDDINGS_PROVIDER as Config["embeddings"]["provider"]) ?? "local",
      url: env.EMBEDDINGS_URL || undefined,
      model: env.EMBEDDINGS_MODEL || undefined,
      apiKey: env.EMBEDDINGS_API_KEY || undefined,
      localModel: env.MNEMO_LOCAL_MODEL ?? "all-MiniLM-L6-v2",
      modelsDir: modelsDirFor(dataDir, env),
      hubUrl: modelHubUrl(env),
      autoDownload: env.MNEMO_MODEL_DOWNLOAD === undefined ? true : flag(env.MNEMO_MODEL_DOWNLOAD),
      modelPins: modelPinsEnabled(env),
      timeoutMs: env.EMBEDDINGS_TIMEOUT_MS ? Number(env.EMBEDDINGS_TIMEOUT_MS) : 10_000,
      ...overrides.embeddings,
    },
    indexer: {
      batchSize: env.MNEMO_INDEX_BATCH ? Number(env.MNEMO_INDEX_BATCH) : 4096,
      maxFragments: env.MNEMO_INDEX_MAX_FRAGMENTS ? Number(env.MNEMO_INDEX_MAX_FRAGMENTS) : 24,
      idleOptimizeMs: env.MNEMO_INDEX_IDLE_OPTIMIZE_MS ? Number(env.MNEMO_INDEX_IDLE_OPTIMIZE_MS) : 5_000,
      vectorIndexMinRows: env.MNEMO_VECTOR_INDEX_MIN_ROWS ? Number(env.MNEMO_VECTOR_INDEX_MIN_ROWS) : 8_192,
      indexCacheMb: env.MNEMO_INDEX_CACHE_MB ? Number(env.MNEMO_INDEX_CACHE_MB) : 256,
      maxOpenTables: env.MNEMO_INDEX_OPEN_TABLES ? Number(env.MNEMO_INDEX_OPEN_TABLES) : 256,
      embeddingCacheMax: env.MNEMO_EMBEDDING_CACHE_MAX ? Number(env.MNEMO_EMBEDDING_CACHE_MAX) : 1_000_000,
      ...overrides.indexer,
    },
    encryption: {
      masterKey: env.SERVER_MASTER_KEY || undefined,
      proxyMode: flag(env.MNEMO_PROXY_ENCRYPTION),
    },
    webhooks: {
      syncId: env.WEBHOOK_ID_SYNC || undefined,
      onboardingId: env.WEBHOOK_ID_ONBOARDING || undefined,
    },
    files: {
      maxFileBytes: env.MNEMO_MAX_FILE_BYTES ? Number(env.MNEMO_MAX_FILE_BYTES) : 100 * 1024 * 1024,
      // Beside the index (same kind of location, so every replica reaches it), never inside it.
      blobsUri: env.MNEMO_BLOBS_URI || blobsBeside(overrides.index?.uri || env.MNEMO_INDEX_URI, dataDir),
      orphanSweepMs: env.MNEMO_BLOB_SWEEP_MS ? Number(env.MNEMO_BLOB_SWEEP_MS) : 6 * 60 * 60 * 1000,
      orphanAgeMs: env.MNEMO_BLOB_ORPHAN_AGE_MS ? Number(env.MNEMO_BLOB_ORPHAN_AGE_MS) : 24 * 60 * 60 * 1000,
      ...overrides.files,
    },
    completions: {
      gatewayUrl: (env.LLM_GATEWAY_URL || "http://127.0.0.1:11434/v1").replace(/\/+$/, ""),
      gatewayApiKey: env.LLM_GATEWAY_API_KEY || undefined,
      gatewayTimeoutMs: env.LLM_GATEWAY_TIMEOUT_MS ? Number(env.LLM_GATEWAY_TIMEOUT_MS) : 120_000,
      defaultModel: env.DEFAULT_MODEL || "llama3.2",
      models: parseModelList(env.MNEMO_MODELS),
      monthlyTokenLimit: env.MONTHLY_TOKEN_LIMIT ? Number(env.MONTHLY_TOKEN_LIMIT) : 1_000_000,
      memoryWindowMs: env.MNEMO_MEMORY_WINDOW_MS ? Number(env.MNEMO_MEMORY_WINDOW_MS) : 800,
      completionReserveTokens: env.MNEMO_COMPLETION_RESERVE_TOKENS ? Number(env.MNEMO_COMPLETION_RESERVE_TOKENS) : 1024,
      rateLimitPerKeyPerMinute: env.MNEMO_RATE_LIMIT_KEY_PER_MINUTE ? Number(env.MNEMO_RATE_LIMIT_KEY_PER_MINUTE) : 60,
      rateLimitPerPrincipalPerHour: env.MNEMO_RATE_LIMIT_PRINCIPAL_PER_HOUR
        ? Number(env.MNEMO_RATE_LIMIT_PRINCIPAL_PER_HOUR)
        : 600,
      memoryModel: env.MNEMO_MEMORY_MODEL || undefined,
      extractionInProxyMode: flag(env.MNEMO_EXTRACTION_IN_PROXY_MODE),
      extractionRetryMs: env.MNEMO_EXTRACTION_RETRY_MS ? Number(env.MNEMO_EXTRACTION_RETRY_MS) : 5_000,
      ...overrides.completions,
    },
  };
  return config;
}
