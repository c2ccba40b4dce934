import type { Config } from "../../config";
import type { Logger } from "../../lib/log";
import type { Embedder } from "./embedder";

/** Bridges the config to the local ONNX embedder (src/search/embedders/local). */
export async function createLocalEmbedderFromConfig(config: Config["embeddings"], log: Logger): Promise<Embedder | null> {
  try {
    const local = await import("./local");
    return local.createLocalEmbedder({
      modelsDir: config.modelsDir,
      model: config.localModel,
      hubUrl: config.hubUrl,
      autoDownload: config.autoDownload,
      log: (line: string) => log.info(line),
    });
  } catch (error) {
    log.warn("local embedder could not load; search uses full text", { reason: (error as Error).message });
    return null;
  }
}
