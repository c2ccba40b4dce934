/** What a stream told us about its cost, for metering. */
export interface StreamTally {
  /** The upstream's `usage` (from `stream_options.include_usage`), when it sent one. */
  usage: { prompt_tokens?: number; completion_tokens?: number } | null;
  /** The completion text seen so far (content and tool-call arguments), for counting when no usage came. */
  text: string;
}

export interface PassThroughOptions {
  /** Drop the usage-only chunk (`choices: []`): the client did not ask for it, we did. */
  stripUsageChunk: boolean;
  /**
   * Called once: the stream ended (`done`), the client went away (`aborted`) or the
   * upstream broke (`error`). On `done` the stream closes only after it settles, so
   * usage is recorded by the time the client has read the whole stream.
   */
  onEnd(outcome: "done" | "aborted" | "error", tally: StreamTally): void | Promise<void>;
  /** Aborts the upstream request. */
  abortUpstream(): void;
  /** The client's request: its abort ends the stream at once (metered as `aborted`). */
  clientSignal?: AbortSignal;
  /** An error event from the upstream (its data, verbatim): for the log only; the client gets `UPSTREAM_ERROR_EVENT`. */
  onUpstreamError?(data: string): void;
}

/** What the client sees for an upstream's mid-stream error event: the spec's error shape, nothing of the upstream's text. */
export const UPSTREAM_ERROR_EVENT = `data: ${JSON.stringify({ error: { code: "upstream_error", message: "the model gateway reported an error mid-stream" } })}`;

const EVENT_END = /\r?\n\r?\n/;
const encoder = new TextEncoder();

function tallyEvent(event: string, tally: StreamTally): "usage-only" | "done" | "error" | "other" {
  const data = event
    .split(/\r?\n/)
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).replace(/^ /, ""))
    .join("\n");
  if (data === "[DONE]") return "done";
  if (!data) return "other";
  let chunk: any;
  try {
    chunk = JSON.parse(data);
  } catch {
    return "other";
  }
  if (chunk?.error) return "error";
  if (chunk?.usage && typeof chunk.usage === "object") tally.usage = chunk.usage;
  const choices = Array.isArray(chunk?.choices) ? chunk.choices : null;
  for (const choice of choices ?? []) {
    const delta = choice?.delta;
    if (typeof delta?.content === "string") tally.text += delta.content;
    for (const call of Array.isArray(delta?.tool_calls) ? delta.tool_calls : []) {
      if (typeof call?.function?.arguments === "string") tally.text += call.function.arguments;
    }
  }
  return choices && choices.length === 0 && chunk?.usage ? "usage-only" : "other";
}

/**
 * Passes an upstream Server-Sent Events body through, event by event as they arrive
 * (nothing waits for more than the event it is in), reading each for metering. An error
 * event is replaced by a generic one. The client cancelling the stream aborts the
 * upstream request.
 */
export function passThrough(upstream: ReadableStream<Uint8Array>, options: PassThroughOptions): ReadableStream<Uint8Array> {
  const reader = upstream.getReader();
  const decoder = new TextDecoder();
  const tally: StreamTally = { usage: null, text: "" };
  let buffer = "";
  let ended = false;
  const end = async (outcome: "done" | "aborted" | "error") => {
    if (ended) return;
    ended = true;
    await options.onEnd(outcome, tally);
  };

  options.clientSignal?.addEventListener("abort", () => void end("aborted"), { once: true });

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Reads until at least one whole event went out (or the upstream ended).
      for (;;) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (error) {
          if (ended) return;
          void end("error");
          controller.error(error);
          return;
        }
        if (chunk.done) {
          buffer += decoder.decode();
          if (buffer.trim()) {
            if (tallyEvent(buffer, tally) === "error") {
              options.onUpstreamError?.(buffer);
              controller.enqueue(encoder.encode(`${UPSTREAM_ERROR_EVENT}\n\n`));
            } else controller.enqueue(encoder.encode(buffer));
          }
          await end("done");
          controller.close();
          return;
        }
        buffer += decoder.decode(chunk.value, { stream: true });
        let out = "";
        for (let match = EVENT_END.exec(buffer); match; match = EVENT_END.exec(buffer)) {
          const event = buffer.slice(0, match.index);
          buffer = buffer.slice(match.index + match[0].length);
          const kind = tallyEvent(event, tally);
          if (kind === "error") {
            options.onUpstreamError?.(event);
            out += `${UPSTREAM_ERROR_EVENT}\n\n`;
            continue;
          }
          if (kind === "done") {
            // Metered before the client sees [DONE]: clients (the OpenAI SDK) hang up right after it.
            if (out) controller.enqueue(encoder.encode(out));
            out = "";
            await end("done");
          }
          if (!(kind === "usage-only" && options.stripUsageChunk)) out += `${event}\n\n`;
        }
        if (out) {
          controller.enqueue(encoder.encode(out));
          return;
        }
      }
    },
    cancel() {
      void end("aborted");
      options.abortUpstream();
      reader.cancel().catch(() => {});
    },
  });
}
