/**
 * The main-thread side of the encoder: starts the model in a worker (in-thread when no
 * worker can be started), splits work into length-sorted batches and runs them one at a
 * time, queries before documents, so a search waits for at most one document batch.
 */
import type { EmbedPurpose } from "../embedder.ts";
import type { EncoderRequest, EncoderResponse } from "./encoder-protocol.ts";
import { SentenceEncoder, type SentenceEncoderOptions } from "./sentence-encoder.ts";

/**
 * Path of the worker entry relative to the repository root. `bun build --compile` must
 * get it as an extra entrypoint, with the other entrypoints also under the repo root:
 * `bun build --compile cli/mnemo.ts src/search/embedders/local/encoder-worker.ts`.
 */
export const ENCODER_WORKER_ENTRY = "src/search/embedders/local/encoder-worker.ts";

/** Runs one batch; both the worker and the in-thread encoder provide it. */
interface BatchRunner {
  run(texts: string[], purpose: EmbedPurpose): Promise<Float32Array[]>;
  close(): Promise<void>;
}

/** A loaded model behind a batching queue. */
export interface EncoderHost {
  /** Embeds any number of texts; vectors come back in input order. */
  encode(texts: string[], purpose: EmbedPurpose): Promise<Float32Array[]>;
  close(): Promise<void>;
  /** False when the model runs on the main thread because no worker could be started. */
  readonly inWorker: boolean;
}

/** Raised when the worker could not start at all (as opposed to failing to load the model). */
class WorkerStartError extends Error {}

function workerUrl(): string {
  // Inside a compiled binary, entrypoints live under `/$bunfs/root/<path from the repo root>`.
  if (Bun.isStandaloneExecutable) return `./${ENCODER_WORKER_ENTRY}`;
  return new URL("./encoder-worker.ts", import.meta.url).href;
}

async function startWorker(options: SentenceEncoderOptions, onStopped: (reason: string) => void): Promise<BatchRunner> {
  const worker = new Worker(workerUrl());
  const pending = new Map<number, { resolve(vectors: Float32Array[]): void; reject(error: Error): void }>();
  let nextId = 0;
  let loaded = false;
  let settleLoad!: (error?: Error) => void;
  let settleClose: (() => void) | undefined;
  let stopped: Error | undefined;
  const load = new Promise<void>((resolve, reject) => {
    settleLoad = (error) => (error ? reject(error) : resolve());
  });
  const stop = (error: Error) => {
    if (stopped) return;
    stopped = error;
    settleLoad(loaded ? undefined : new WorkerStartError(error.message));
    if (loaded && !settleClose) onStopped(error.message);
    for (const job of pending.values()) job.reject(error);
    pending.clear();
  };
  worker.onmessage = (event: MessageEvent<EncoderResponse>) => {
    const message = event.data;
    if (message.type === "loaded") {
      loaded = true;
      settleLoad();
    } else if (message.type === "closed") {
      settleClose?.();
    } else if (message.type === "encoded" || message.id !== undefined) {
      const job = pending.get(message.id!);
      pending.delete(message.id!);
      if (pending.size === 0) worker.unref();
      if (message.type === "encoded") job?.resolve(message.vectors);
      else job?.reject(new Error(message.message));
    } else {
      settleLoad(new Error(message.message));
    }
  };
  worker.onerror = (event) => stop(new Error(`encoder worker crashed: ${event.message}`));
  worker.addEventListener("close", () => stop(new Error("encoder worker stopped")));
  const send = (request: EncoderRequest) => worker.postMessage(request);
  send({ type: "load", options });
  try {
    await load;
  } catch (error) {
    worker.terminate();
    throw error;
  }
  // An idle encoder must not keep the process alive; a busy one must (see run).
  worker.unref();
  return {
    run(texts, purpose) {
      if (stopped) return Promise.reject(stopped);
      const id = nextId++;
      return new Promise((resolve, reject) => {
        if (pending.size === 0) worker.ref();
        pending.set(id, { resolve, reject });
        send({ type: "encode", id, texts, purpose });
      });
    },
    async close() {
      if (stopped) return;
      await new Promise<void>((resolve) => {
        worker.ref();
        settleClose = resolve;
        send({ type: "close" });
      });
      worker.terminate();
    },
  };
}

/**
 * Loads the model and returns a host that batches work for it.
 *
 * @param options.batchSize texts per ONNX run (default 32).
 * @param options.useWorker run the model in a worker thread (default true).
 * @param options.onStopped called when the worker dies after loading; the host is then unusable.
 * @example
 * const host = await startEncoder({ modelDir, spec, runtimeCacheDir, log });
 * const vectors = await host.encode(["a", "b"], "document");
 */
export async function startEncoder(
  options: SentenceEncoderOptions & {
    batchSize?: number;
    useWorker?: boolean;
    log: (line: string) => void;
    onStopped?: (reason: string) => void;
  },
): Promise<EncoderHost> {
  const { batchSize = 32, useWorker = true, log, onStopped = () => {}, ...encoderOptions } = options;
  let runner: BatchRunner | undefined;
  let inWorker = false;
  if (useWorker) {
    try {
      runner = await startWorker(encoderOptions, onStopped);
      inWorker = true;
    } catch (error) {
      if (!(error instanceof WorkerStartError)) throw error;
      log(`local embedder: no worker thread (${error.message}); the model runs on the main thread`);
    }
  }
  if (!runner) {
    const encoder = await SentenceEncoder.load(encoderOptions);
    runner = { run: (texts, purpose) => encoder.encode(texts, purpose), close: () => encoder.close() };
  }
  return createBatchQueue(runner, batchSize, inWorker);
}

interface Job {
  texts: string[];
  purpose: EmbedPurpose;
  resolve(vectors: Float32Array[]): void;
  reject(error: unknown): void;
}

function createBatchQueue(runner: BatchRunner, batchSize: number, inWorker: boolean): EncoderHost {
  const queries: Job[] = [];
  const documents: Job[] = [];
  let running = false;

  const pump = () => {
    if (running) return;
    const job = queries.shift() ?? documents.shift();
    if (!job) return;
    running = true;
    runner
      .run(job.texts, job.purpose)
      .then(job.resolve, job.reject)
      .finally(() => {
        running = false;
        pump();
      });
  };

  const runBatch = (texts: string[], purpose: EmbedPurpose) =>
    new Promise<Float32Array[]>((resolve, reject) => {
      (purpose === "query" ? queries : documents).push({ texts, purpose, resolve, reject });
      pump();
    });

  return {
    inWorker,
    async encode(texts, purpose) {
      // Similar lengths in one batch means little padding; character length is a good proxy.
      const order = texts.map((_, index) => index).sort((a, b) => texts[a].length - texts[b].length);
      const batches: Promise<Float32Array[]>[] = [];
      for (let start = 0; start < order.length; start += batchSize) {
        const indices = order.slice(start, start + batchSize);
        batches.push(
          runBatch(
            indices.map((index) => texts[index]),
            purpose,
          ),
        );
      }
      const results = await Promise.all(batches);
      const vectors = new Array<Float32Array>(texts.length);
      results.forEach((batch, batchIndex) => {
        batch.forEach((vector, i) => {
          vectors[order[batchIndex * batchSize + i]] = vector;
        });
      });
      return vectors;
    },
    close: () => runner.close(),
  };
}
