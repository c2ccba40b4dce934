import { mkdtempSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ConfigError, configError } from "./config-errors";
import type { Config, ConfigOverrides } from "./config-schema";

// The whole runtime configuration, parsed once from the environment (and CLI overrides) and
// handed down typed: its schema is config-schema.ts, and nothing else in `src/` reads `process.env`.
export { ConfigSchema, type Config, type ConfigOverrides } from "./config-schema";
export { ConfigError } from "./config-errors";

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
      maxUnindexedRows: env.MNEMO_INDEX_MAX_UNINDEXED_ROWS ? Number(env.MNEMO_INDEX_MAX_UNINDEXED_ROWS) : 2_000,
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
