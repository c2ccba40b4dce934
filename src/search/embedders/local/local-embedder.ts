/**
 * The `local` embedding provider: a sentence-embedding ONNX model run in-process.
 *
 * Creating it never blocks: the model is checked, downloaded if allowed and loaded in the
 * background. Until it is ready `embed` throws EmbedderUnavailableError (callers fall back
 * to full text) and one log line says why. Loading is tried again when the model's files
 * change (e.g. `mnemo models pull` in another process) or after `retryAfterMs`.
 */
import { join } from "node:path";
import { type Embedder, type EmbedPurpose, EmbedderUnavailableError } from "../embedder.ts";
import { type EncoderHost, startEncoder } from "./encoder-host.ts";
import { DEFAULT_HUB_URL, pullModel } from "./hub-download.ts";
import { checkModelFiles, modelDirectory, modelFilesFingerprint } from "./model-files.ts";
import { type LocalModelSpec, getModelSpec } from "./model-registry.ts";

/** Options of {@link createLocalEmbedder}. */
export interface LocalEmbedderOptions {
  /** Holds one directory per model (`MNEMO_MODELS_DIR`, default `<data>/models`). */
  modelsDir: string;
  /** `all-MiniLM-L6-v2` (default in config) or `bge-small-en-v1.5`. */
  model: string;
  /** Base URL of the model hub (`MNEMO_MODEL_HUB`); default `https://huggingface.co`. */
  hubUrl?: string;
  /** Download missing files from the hub in the background. */
  autoDownload: boolean;
  /** Check the registry's pinned hashes and sizes (default true; `MNEMO_MODEL_PINS=off`). */
  pins?: boolean;
  /** Receives one line per state change: downloading, ready, unavailable and why. */
  log: (line: string) => void;
  /** Intra-op threads of the ONNX session; default: the number of cores. */
  threads?: number;
  /** Texts per ONNX run; default 32. */
  batchSize?: number;
  /** After a failure, the next `embed` later than this tries again; default 60 s. */
  retryAfterMs?: number;
  /** Run the model in a worker thread so batches never block the event loop; default true. */
  useWorker?: boolean;
}

/** Where the local embedder stands. */
export type LocalEmbedderState = "loading" | "downloading" | "ready" | "unavailable";

/** The local provider, with a view of its loading state for health checks and tests. */
export interface LocalEmbedder extends Embedder {
  readonly model: LocalModelSpec;
  /** Current state; unless ready, why not; when ready, whether the model runs in a worker thread. */
  status(): { state: LocalEmbedderState; reason?: string; inWorker?: boolean };
  /** Settles when the current load (and download) attempt ends; true when ready. Never throws. */
  whenSettled(): Promise<boolean>;
  /** Stops the encoder worker and frees the model. */
  close(): Promise<void>;
}

/**
 * Creates the local embedder and starts loading its model in the background.
 *
 * @throws Error only for a model name that is not in the registry (a configuration error).
 * @example
 * const embedder = createLocalEmbedder({ modelsDir, model: "all-MiniLM-L6-v2", autoDownload: true, log: console.log });
 * try { vectors = await embedder.embed(["hello"], "query"); }
 * catch (e) { if (e instanceof EmbedderUnavailableError) useFullText(); else throw e; }
 */
export function createLocalEmbedder(options: LocalEmbedderOptions): LocalEmbedder {
  const spec = getModelSpec(options.model, { pins: options.pins });
  const retryAfterMs = options.retryAfterMs ?? 60_000;
  const hub = options.hubUrl ?? DEFAULT_HUB_URL;
  const dir = modelDirectory(options.modelsDir, spec.name);
  let host: EncoderHost | undefined;
  let attempt: Promise<void> | undefined;
  let download: Promise<void> | undefined;
  let downloadProgress = "";
  let failure: { reason: string; at: number; fingerprint: string } | undefined;
  // Each distinct line is logged once per outage, so retries do not flood the log.
  const logged = new Set<string>();
  let closed = false;

  const logOnce = (line: string) => {
    if (!logged.has(line)) options.log(line);
    logged.add(line);
  };

  /** Records why the model is unavailable; `force` when files are present but unusable. */
  const fail = (reason: string, force = false) => {
    failure = { reason, at: Date.now(), fingerprint: modelFilesFingerprint(options.modelsDir, spec) };
    const pull = `mnemo models pull ${spec.name}${force ? " --force" : ""}`;
    logOnce(`local embedder: ${reason}; search uses full text until \`${pull}\` succeeds`);
  };

  const loadEncoder = async () => {
    const started = performance.now();
    const encoder = await startEncoder({
      modelDir: dir,
      spec,
      threads: options.threads,
      runtimeCacheDir: join(options.modelsDir, ".runtime"),
      batchSize: options.batchSize,
      useWorker: options.useWorker,
      log: options.log,
      onStopped: (reason) => {
        host = undefined;
        fail(`model ${spec.name} stopped (${reason})`);
      },
    });
    if (closed) return void (await encoder.close());
    host = encoder;
    failure = undefined;
    logged.clear();
    logOnce(
      `local embedder: model ${spec.name} ready (${spec.dimension}-d, loaded in ${Math.round(performance.now() - started)} ms)`,
    );
  };

  const downloadThenLoad = async () => {
    logOnce(`local embedder: model ${spec.name} not found in ${dir}; downloading from ${hub}`);
    try {
      await pullModel({
        modelsDir: options.modelsDir,
        model: spec.name,
        hubUrl: options.hubUrl,
        pins: options.pins,
        force: true,
        onProgress: (received, total) => {
          downloadProgress = total ? `${Math.floor((received / total) * 100)}%` : `${received} bytes`;
        },
      });
    } catch (error) {
      return fail(`model ${spec.name} not found in ${dir} and download failed (${describe(error)})`);
    }
    try {
      await loadEncoder();
    } catch (error) {
      fail(`model ${spec.name} downloaded but failed to load (${describe(error)})`, true);
    }
  };

  /** Checks the files and loads them; starts a background download when allowed. */
  const load = async () => {
    const files = await checkModelFiles(options.modelsDir, spec);
    if (files.state === "present") {
      try {
        await loadEncoder();
      } catch (error) {
        fail(`model ${spec.name} in ${dir} failed to load (${describe(error)})`, true);
      }
    } else if (files.state === "corrupt" || !options.autoDownload) {
      const hint = options.autoDownload ? "" : " and download is disabled";
      fail(
        `model ${spec.name} ${files.state === "corrupt" ? "is corrupt" : "is unavailable"}: ${files.problem}${hint}`,
      );
    } else {
      failure = undefined;
      downloadProgress = "";
      download = downloadThenLoad().finally(() => {
        download = undefined;
      });
    }
  };

  const startAttempt = () => {
    attempt ??= load()
      .catch((error) => fail(`model ${spec.name} failed to load (${describe(error)})`))
      .finally(() => {
        attempt = undefined;
      });
    return attempt;
  };

  const retryIsDue = () =>
    failure !== undefined &&
    (Date.now() - failure.at >= retryAfterMs || modelFilesFingerprint(options.modelsDir, spec) !== failure.fingerprint);

  const unavailableReason = () => {
    if (download) return `model ${spec.name} is downloading (${downloadProgress || "starting"})`;
    if (failure) return failure.reason;
    return `model ${spec.name} is loading`;
  };

  void startAttempt();

  return {
    provider: "local",
    spaceId: `local:${spec.name}`,
    model: spec,
    status() {
      if (host) return { state: "ready", inWorker: host.inWorker };
      if (download) return { state: "downloading", reason: unavailableReason() };
      if (attempt) return { state: "loading", reason: unavailableReason() };
      return { state: "unavailable", reason: unavailableReason() };
    },
    async whenSettled() {
      while (attempt || download) await (attempt ?? download);
      return host !== undefined;
    },
    async embed(texts: string[], purpose: EmbedPurpose) {
      if (texts.length === 0) return [];
      if (closed) throw new EmbedderUnavailableError("local embedder: closed");
      if (!host && !download && retryIsDue()) void startAttempt();
      // Loading from disk takes a moment and is worth waiting for; a download is not.
      if (!host && attempt) await attempt;
      const current = host;
      if (!current) throw new EmbedderUnavailableError(`local embedder: ${unavailableReason()}`);
      try {
        return await current.encode(texts, purpose);
      } catch (error) {
        // The worker died under this call: that is an outage, not a bad input.
        if (host !== current) throw new EmbedderUnavailableError(`local embedder: ${unavailableReason()}`);
        throw error;
      }
    },
    async close() {
      closed = true;
      const current = host;
      host = undefined;
      await current?.close();
    },
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
