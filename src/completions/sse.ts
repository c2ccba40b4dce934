import { pick } from "../lib/json-path";

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
  /** An upstream event that is not a completion chunk (verbatim): for the log only, redacted; the client gets `UPSTREAM_ERROR_EVENT`. */
  onUpstreamError?(event: string): void;
}

/** What the client sees for anything in a stream that is not a completion chunk: the error shape (docs/api.md#errors), nothing of the upstream's text. */
export const UPSTREAM_ERROR_EVENT = `data: ${JSON.stringify({ error: { code: "upstream_error", message: "the model gateway reported an error mid-stream" } })}`;

/** What an SSE comment becomes: a bare `:` keeps a proxy's idle timer reset without its text. */
const KEEPALIVE = ":";

const EVENT_END = /\r?\n\r?\n/;
const encoder = new TextEncoder();

/** An upstream event as the client gets it (`out`: the text before the blank line, null for nothing) and what it was. */
interface Classified {
  kind: "chunk" | "usage-only" | "done" | "keepalive" | "error";
  out: string | null;
}

interface Chunk {
  choices: unknown[];
  usage?: unknown;
}

const isChunk = (chunk: unknown): chunk is Chunk =>
  typeof chunk === "object" &&
  chunk !== null &&
  !Array.isArray(chunk) &&
  Array.isArray(pick(chunk, "choices")) &&
  pick(chunk, "error") === undefined &&
  (pick(chunk, "object") === undefined || pick(chunk, "object") === "chat.completion.chunk");

/**
 * Reads one upstream event. Only a well-formed completion chunk (JSON with a `choices`
 * array, no `error`, `object` absent or `chat.completion.chunk`) and `[DONE]` pass, and
 * only as their `data:` lines: an `event:` other than `message`, an `{"error": …}` or
 * `{"object": "error"}` object, plain text or any other JSON is an error (the gateway's
 * text may name internal addresses or key fragments). Comment lines are never passed on;
 * an event of comments only is a keepalive.
 */
function classify(event: string, tally: StreamTally): Classified {
  const data: string[] = [];
  let type = "message";
  let fields = 0;
  let comments = 0;
  for (const line of event.split(/\r?\n/)) {
    if (line === "") continue;
    if (line.startsWith(":")) {
      comments++;
      continue;
    }
    fields++;
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (name === "data") data.push(value);
    else if (name === "event") type = value;
  }
  if (fields === 0) return { kind: "keepalive", out: comments ? KEEPALIVE : null };
  const error: Classified = { kind: "error", out: UPSTREAM_ERROR_EVENT };
  if (type !== "message" || data.length === 0) return error;
  const text = data.join("\n");
  if (text === "[DONE]") return { kind: "done", out: "data: [DONE]" };
  let chunk: unknown;
  try {
    chunk = JSON.parse(text);
  } catch {
    return error;
  }
  if (!isChunk(chunk)) return error;
  if (chunk.usage && typeof chunk.usage === "object") tally.usage = chunk.usage as StreamTally["usage"];
  for (const choice of chunk.choices) {
    const content = pick(choice, "delta", "content");
    if (typeof content === "string") tally.text += content;
    const calls = pick(choice, "delta", "tool_calls");
    for (const call of Array.isArray(calls) ? calls : []) {
      const args = pick(call, "function", "arguments");
      if (typeof args === "string") tally.text += args;
    }
  }
  const out = data.map((line) => `data: ${line}`).join("\n");
  return { kind: chunk.choices.length === 0 && chunk.usage ? "usage-only" : "chunk", out };
}

/**
 * Passes an upstream Server-Sent Events body through, event by event as they arrive
 * (nothing waits for more than the event it is in), reading each for metering. Only
 * completion chunks and `[DONE]` pass (see `classify`); anything else is replaced by a
 * generic error event, comments by a bare keepalive. The client cancelling the stream aborts the
 * upstream request.
 */
export function passThrough(
  upstream: ReadableStream<Uint8Array>,
  options: PassThroughOptions,
): ReadableStream<Uint8Array> {
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
          const event = buffer.trim() ? classify(buffer, tally) : null;
          if (event?.kind === "error") options.onUpstreamError?.(buffer);
          if (event?.out && !(event.kind === "usage-only" && options.stripUsageChunk))
            controller.enqueue(encoder.encode(`${event.out}\n\n`));
          await end("done");
          controller.close();
          return;
        }
        buffer += decoder.decode(chunk.value, { stream: true });
        let out = "";
        for (let match = EVENT_END.exec(buffer); match; match = EVENT_END.exec(buffer)) {
          const raw = buffer.slice(0, match.index);
          buffer = buffer.slice(match.index + match[0].length);
          const event = classify(raw, tally);
          if (event.kind === "error") options.onUpstreamError?.(raw);
          if (event.kind === "done") {
            // Metered before the client sees [DONE]: clients (the OpenAI SDK) hang up right after it.
            if (out) controller.enqueue(encoder.encode(out));
            out = "";
            await end("done");
          }
          if (event.out && !(event.kind === "usage-only" && options.stripUsageChunk)) out += `${event.out}\n\n`;
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
