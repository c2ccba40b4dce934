import type { Config } from "../../config";
import type { Logger } from "../../lib/log";
import { type EmbedPurpose, type Embedder, EmbedderUnavailableError } from "./embedder";
import { getModelSpec } from "./local/model-registry";

/**
 * Bridges the config to the local ONNX embedder (src/search/embedders/local), loaded on
 * first use: the embedder module, its model files' check, the encoder worker and
 * onnxruntime (45 MB of native code) load when something is first embedded (the index
 * writer's first vectors, or the first search), not when the server starts. That first
 * call waits for the model as a call during a load always did; a missing model is
 * downloaded from then on (with MNEMO_MODEL_DOWNLOAD), its reason logged then.
 * An unknown model name is still refused at start (logged; search uses full text).
 */
export async function createLocalEmbedderFromConfig(
  config: Config["embeddings"],
  log: Logger,
): Promise<Embedder | null> {
  let spaceId: string;
  try {
    spaceId = `local:${getModelSpec(config.localModel).name}`;
  } catch (error) {
    log.warn("local embedder could not load; search uses full text", { reason: (error as Error).message });
    return null;
  }
  let loading: Promise<Embedder> | undefined;
  let closed = false;
  const load = () =>
    (loading ??= import("./local").then(
      (local) =>
        local.createLocalEmbedder({
          modelsDir: config.modelsDir,
          model: config.localModel,
          hubUrl: config.hubUrl,
          autoDownload: config.autoDownload,
          pins: config.modelPins,
          log: (line: string) => log.info(line),
        }),
      // The module itself cannot load (a broken install): an outage, said once; search uses full text.
      (error: Error) => {
        log.warn("local embedder could not load; search uses full text", { reason: error.message });
        throw new EmbedderUnavailableError(`local embedder: could not load (${error.message})`);
      },
    ));
  return {
    provider: "local",
    spaceId,
    async embed(texts: string[], purpose: EmbedPurpose, signal?: AbortSignal) {
      // Nothing to embed loads nothing (the local embedder answers [] without its model too).
      if (texts.length === 0) return [];
      if (closed) throw new EmbedderUnavailableError("local embedder: closed");
      return (await load()).embed(texts, purpose, signal);
    },
    async close() {
      closed = true;
      if (loading) await (await loading.catch(() => null))?.close?.();
    },
  };
}
