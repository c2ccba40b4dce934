import type { Config } from "../config";
import { decryptString, isCiphertextString, isEnvelope, openEnvelope, type Envelope } from "../crypto/aes-gcm";
import type { ClientKeys } from "../crypto/client-keys";
import type { Store } from "../db/store";
import type { DocumentsQueryService } from "../documents-query/service";
import type { Logger } from "../lib/log";
import { createRateLimitRepository } from "../rate-limits/repository";
import { createRateLimiter } from "../rate-limits/service";
import { createUsageRepository } from "../usage/repository";
import { createUsageService } from "../usage/service";
import type { WorkspaceService } from "../workspaces/service";
import { createAdmission } from "./admission";
import { createModelCatalog } from "./models";
import { createRetriever, type NoteDecryptor, type RetrieverDeps } from "./retrieval";
import { createCompletionService } from "./service";
import { createUpstream } from "./upstream";

/** How long a quota hold lasts beyond the gateway timeout: streams run past that timeout, as long as the model writes. */
const HOLD_GRACE_MS = 30 * 60_000;

/** Usage metering, rate limits, the upstream and the completion service, wired (issue 11). */
export function createCompletionServices(d: {
  config: Config;
  store: Store;
  engine: RetrieverDeps["engine"];
  workspaces: WorkspaceService;
  documentsQuery: DocumentsQueryService;
  log: Logger;
  /** The request's client key: X-Client-Key, else the escrowed one (src/crypto). */
  clientKeys?: ClientKeys;
}) {
  const c = d.config.completions;
  const upstream = createUpstream({ baseUrl: c.gatewayUrl, apiKey: c.gatewayApiKey, timeoutMs: c.gatewayTimeoutMs, log: d.log });
  const usage = createUsageService({ store: d.store, repo: createUsageRepository(), defaultMonthlyLimit: c.monthlyTokenLimit });
  const limiter = createRateLimiter({ store: d.store, repo: createRateLimitRepository() });
  // A hold outlives any answer the gateway may still give; past it (its server died) it stops counting.
  const admit = createAdmission({ store: d.store, limiter, usage, holdTtlMs: c.gatewayTimeoutMs + HOLD_GRACE_MS });
  const retriever = createRetriever({
    engine: d.engine, documentsQuery: d.documentsQuery, log: d.log, decryptor: d.clientKeys ? noteDecryptor(d.clientKeys) : undefined, looksEncrypted,
  });
  return {
    usage,
    models: createModelCatalog({ upstream, curated: c.models, defaultModel: c.defaultModel, timeoutMs: c.gatewayTimeoutMs, log: d.log }),
    completions: createCompletionService({ config: c, upstream, retriever, usage, admit, workspaces: d.workspaces, log: d.log }),
  };
}

/** A stored value as an envelope (`{format, ciphertext}` as JSON text), or null. */
function envelopeOf(value: string): Envelope | null {
  const text = value.trim();
  if (!text.startsWith("{") || !text.includes("ciphertext")) return null;
  try {
    const parsed = JSON.parse(text);
    return isEnvelope(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** Whether a note's text is stored encrypted: an `iv:tag:ciphertext` string or an envelope. */
export const looksEncrypted = (value: string) => isCiphertextString(value.trim()) || envelopeOf(value) !== null;

/** Opens encrypted note text with the request's client key; a value the key does not open is null (skipped). */
export function noteDecryptor(clientKeys: ClientKeys): NoteDecryptor {
  return async (userId, header) => {
    const key = await clientKeys.resolve(userId, header);
    if (!key) return null;
    return (value) => {
      try {
        const envelope = envelopeOf(value);
        if (envelope) {
          const opened = openEnvelope(envelope, key);
          return typeof opened === "string" ? opened : JSON.stringify(opened);
        }
        return decryptString(value.trim(), key);
      } catch {
        return null;
      }
    };
  };
}
