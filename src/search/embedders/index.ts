import type { Config } from "../../config";
import type { Logger } from "../../lib/log";
import type { Embedder } from "./embedder";
import { createOpenAiEmbedder } from "./openai";

/**
 * Picks the configured provider. `none` means full-text only (null). The local model
 * is imported lazily: its native runtime loads only when it is the chosen provider.
 */
export async function createEmbedder(config: Config["embeddings"], log: Logger): Promise<Embedder | null> {
  switch (config.provider) {
    case "none":
      return null;
    case "openai":
      return createOpenAiEmbedder({
        url: config.url!,
        model: config.model ?? "text-embedding-3-small",
        apiKey: config.apiKey,
        timeoutMs: config.timeoutMs,
      });
    case "local": {
      const { createLocalEmbedderFromConfig } = await import("./local-provider");
      return createLocalEmbedderFromConfig(config, log);
    }
  }
}
