/**
 * Worker entry of the local embedder. onnxruntime-node's `session.run` is synchronous, so
 * a batch of documents would freeze the server's event loop for hundreds of milliseconds;
 * here it blocks only this thread.
 *
 * A compiled binary must list this file as an extra entrypoint (see ENCODER_WORKER_ENTRY).
 */
import type { EncoderRequest, EncoderResponse } from "./encoder-protocol.ts";
import { SentenceEncoder } from "./sentence-encoder.ts";

declare const self: Worker;

let encoder: SentenceEncoder | undefined;

function reply(message: EncoderResponse, transfer: ArrayBuffer[] = []): void {
  self.postMessage(message, transfer);
}

self.onmessage = async (event: MessageEvent<EncoderRequest>) => {
  const request = event.data;
  try {
    switch (request.type) {
      case "load":
        encoder = await SentenceEncoder.load(request.options);
        reply({ type: "loaded" });
        break;
      case "encode": {
        if (!encoder) throw new Error("encoder worker has no model loaded");
        const vectors = await encoder.encode(request.texts, request.purpose);
        reply(
          { type: "encoded", id: request.id, vectors },
          vectors.map((vector) => vector.buffer as ArrayBuffer),
        );
        break;
      }
      case "close":
        await encoder?.close();
        encoder = undefined;
        reply({ type: "closed" });
        break;
    }
  } catch (error) {
    const id = request.type === "encode" ? request.id : undefined;
    reply({ type: "failed", id, message: error instanceof Error ? error.message : String(error) });
  }
};
