import { createAdmission } from "../completions/admission";
import { createModelCatalog } from "../completions/models";
import { createRetriever, type RetrieverDeps } from "../completions/retrieval";
import { createCompletionService, type Capture } from "../completions/service";
import { createUpstream } from "../completions/upstream";
import type { Config } from "../config";
import type { ClientKeys } from "../crypto/client-keys";
import { looksEncrypted, noteDecryptor } from "../crypto/stored-text";
import type { Store } from "../db/store";
import type { DocumentsQueryService } from "../documents-query/service";
import type { Logger } from "../lib/log";
import { createRateLimitRepository } from "../rate-limits/repository";
import { createRateLimiter } from "../rate-limits/service";
import { createUsageRepository } from "../usage/repository";
import { createUsageService } from "../usage/service";
import type { WorkspaceService } from "../workspaces/service";

// Part of the composition root (compose.ts): metering, limits and the completions proxy, wired.

/** How long a quota hold lasts beyond the gateway timeout: streams run past that timeout, as long as the model writes. */
const HOLD_GRACE_MS = 30 * 60_000;

/** Usage metering, rate limits, the upstream and the completion service, wired. */
export function createCompletionServices(d: {
  config: Config;
  store: Store;
  engine: RetrieverDeps["engine"];
  workspaces: WorkspaceService;
  documentsQuery: DocumentsQueryService;
  log: Logger;
  /** The request's client key: X-Client-Key, else the escrowed one (src/crypto). */
  clientKeys: ClientKeys;
  capture: Capture;
}) {
  const c = d.config.completions;
  const upstream = createUpstream({
    baseUrl: c.gatewayUrl,
    apiKey: c.gatewayApiKey,
    timeoutMs: c.gatewayTimeoutMs,
    log: d.log,
  });
  const usage = createUsageService({
    store: d.store,
    repo: createUsageRepository(),
    defaultMonthlyLimit: c.monthlyTokenLimit,
  });
  const limiter = createRateLimiter({ store: d.store, repo: createRateLimitRepository() });
  // A hold outlives any answer the gateway may still give; past it (its server died) it stops counting.
  const admit = createAdmission({ store: d.store, limiter, usage, holdTtlMs: c.gatewayTimeoutMs + HOLD_GRACE_MS });
  const retriever = createRetriever({
    engine: d.engine,
    documentsQuery: d.documentsQuery,
    log: d.log,
    decryptor: noteDecryptor(d.clientKeys),
    looksEncrypted,
  });
  return {
    usage,
    upstream,
    admit,
    models: createModelCatalog({
      upstream,
      curated: c.models,
      defaultModel: c.defaultModel,
      timeoutMs: c.gatewayTimeoutMs,
      log: d.log,
    }),
    completions: createCompletionService({
      config: c,
      upstream,
      retriever,
      usage,
      admit,
      workspaces: d.workspaces,
      log: d.log,
      capture: d.capture,
    }),
  };
}
