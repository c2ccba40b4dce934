import { fakeEmbedding } from "./fake-embedder";

/**
 * A real local HTTP server speaking OpenAI's chat-completions, models and embeddings
 * APIs, for the completion tests and the proxy bench. It records every request it
 * received (the injected system prompt, passed-through fields, the texts it embedded) and
 * can be told to fail, hang, break a stream with an error event, omit or change usage, or
 * answer slowly.
 */
export interface RecordedRequest {
  path: string;
  headers: Record<string, string>;
  body: any;
}

export interface FakeUpstream {
  /** Base URL, …/v1 (what LLM_GATEWAY_URL takes). */
  url: string;
  requests: RecordedRequest[];
  /** The assistant's reply; streamed word by word. */
  reply: string;
  /** Report `usage` (non-streaming always; streaming when `stream_options.include_usage`). */
  sendUsage: boolean;
  /** The `usage` reported; FIXED_USAGE unless changed. */
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  /** Streams send their first chunk, then this as an error event (`data: {…}`), then end. */
  streamError: unknown | null;
  /** Streams send their first chunk, then this text as it is (raw SSE lines, blank line included), then the rest of the reply. */
  streamRaw: string | null;
  /** Non-streaming completions answer 200 with this text as it is, until reset to null. */
  rawReply: string | null;
  /** Every text it was asked to embed, in order (documents and queries alike). */
  embedded: string[];
  /** Completions answer this status, body (and headers) instead, until reset to null. */
  failWith: { status: number; body: unknown; headers?: Record<string, string> } | null;
  /** Completions wait this long before answering (headers included). */
  delayMs: number;
  /** Streams send their first chunk, then hold until the client (Mnemo) aborts. */
  hangStreams: boolean;
  /** Completion requests whose connection was aborted by the caller. */
  aborted: number;
  /** Resolves at the next abort. */
  nextAbort(): Promise<void>;
  /** Embeddings of inputs for which this returns true wait `slowEmbedMs`. */
  slowEmbed: (text: string) => boolean;
  slowEmbedMs: number;
  /**
   * Scripted replies of non-streaming completions, taken in order (then `reply` again): the
   * message content as given, a function of the request's body, or an object sent as JSON
   * text (the memory model's extraction and decision replies).
   */
  script: Array<string | object | ((body: any) => string | object)>;
  /** What `/v1/models` lists; null answers 500. */
  models: Array<{ id: string; owned_by: string }> | null;
  stop(): void;
}

const encoder = new TextEncoder();
const sse = (data: unknown) => encoder.encode(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);

export const FIXED_USAGE = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };

/**
 * A memory model for benches: each user sentence of the conversation is a fact, and each fact
 * is added (extraction and decision prompts are told apart by their JSON data).
 */
function memoryModelReply(body: any): string | null {
  const data = body?.response_format?.type === "json_object" ? body.messages?.[1]?.content : null;
  if (typeof data !== "string") return null;
  const parsed = JSON.parse(data);
  if (Array.isArray(parsed.conversation)) {
    const facts = parsed.conversation
      .filter((m: any) => m.role === "user")
      .flatMap((m: any) => String(m.content).split(/(?<=\.)\s+/))
      .filter(Boolean)
      .slice(0, 20);
    return JSON.stringify({ facts });
  }
  if (Array.isArray(parsed.facts))
    return JSON.stringify({ decisions: parsed.facts.map((f: any) => ({ fact: f.fact, action: "add" })) });
  return null;
}

export function startFakeUpstream(
  options: { reply?: string; record?: boolean; memoryModel?: boolean } = {},
): FakeUpstream {
  const record = options.record !== false;
  let abortWaiters: Array<() => void> = [];
  const state: FakeUpstream = {
    url: "",
    requests: [],
    reply: options.reply ?? "Hello from the fake upstream.",
    sendUsage: true,
    usage: FIXED_USAGE,
    streamError: null,
    streamRaw: null,
    rawReply: null,
    embedded: [],
    failWith: null,
    delayMs: 0,
    hangStreams: false,
    aborted: 0,
    nextAbort: () => new Promise((resolve) => abortWaiters.push(resolve)),
    slowEmbed: () => false,
    slowEmbedMs: 0,
    script: [],
    models: [
      { id: "upstream-model-a", owned_by: "upstream-lab" },
      { id: "llama3.2", owned_by: "meta" },
    ],
    stop: () => server.stop(true),
  };
  const noteAbort = () => {
    state.aborted++;
    const waiters = abortWaiters;
    abortWaiters = [];
    for (const w of waiters) w();
  };

  function completion(body: any, onAbort: () => void) {
    const id = "chatcmpl-fake";
    const created = 1_700_000_000;
    const model = body.model;
    if (!body.stream && state.rawReply !== null)
      return new Response(state.rawReply, { headers: { "content-type": "application/json" } });
    if (!body.stream) {
      let content: unknown = (options.memoryModel && memoryModelReply(body)) || state.reply;
      if (state.script.length) {
        const next = state.script.shift()!;
        content = typeof next === "function" ? next(body) : next;
      }
      return Response.json({
        id,
        object: "chat.completion",
        created,
        model,
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: typeof content === "string" ? content : JSON.stringify(content) },
            finish_reason: "stop",
            logprobs: null,
          },
        ],
        ...(state.sendUsage ? { usage: state.usage } : {}),
      });
    }
    const chunk = (delta: unknown, finish: string | null = null) => ({
      id,
      object: "chat.completion.chunk",
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    const words = state.reply.split(/(?<= )/);
    const hang = state.hangStreams;
    const streamError = state.streamError;
    const streamRaw = state.streamRaw;
    const usage = state.usage;
    const wantsUsage = state.sendUsage && body.stream_options?.include_usage === true;
    let cancel: () => void = () => {};
    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(sse(chunk({ role: "assistant", content: "" })));
        if (streamError) {
          controller.enqueue(sse(streamError));
          controller.close();
          return;
        }
        if (streamRaw !== null) controller.enqueue(encoder.encode(streamRaw));
        if (hang) {
          // Held open until the caller goes away.
          await new Promise<void>((resolve) => (cancel = resolve));
          return;
        }
        for (const word of words) controller.enqueue(sse(chunk({ content: word })));
        controller.enqueue(sse(chunk({}, "stop")));
        if (wantsUsage)
          controller.enqueue(sse({ id, object: "chat.completion.chunk", created, model, choices: [], usage }));
        controller.enqueue(sse("[DONE]"));
        controller.close();
      },
      cancel() {
        onAbort();
        cancel();
      },
    });
    return new Response(stream, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
  }

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname;
      if (request.method === "GET" && path === "/v1/models") {
        if (!state.models) return Response.json({ error: { message: "models unavailable" } }, { status: 500 });
        return Response.json({
          object: "list",
          data: state.models.map((m) => ({ ...m, object: "model", created: 0 })),
        });
      }
      if (request.method === "POST" && path === "/v1/embeddings") {
        const body = (await request.json()) as { input: string | string[]; model: string };
        const inputs = Array.isArray(body.input) ? body.input : [body.input];
        if (record) state.embedded.push(...inputs);
        if (state.slowEmbedMs > 0 && inputs.some(state.slowEmbed)) await Bun.sleep(state.slowEmbedMs);
        return Response.json({
          object: "list",
          model: body.model,
          data: inputs.map((text, index) => ({ object: "embedding", index, embedding: fakeEmbedding(text, 64) })),
        });
      }
      if (request.method === "POST" && path === "/v1/chat/completions") {
        let seen = false;
        const onAbort = () => {
          if (seen) return;
          seen = true;
          noteAbort();
        };
        request.signal.addEventListener("abort", onAbort, { once: true });
        const body = await request.json();
        if (record) state.requests.push({ path, headers: Object.fromEntries(request.headers), body });
        if (state.delayMs > 0) await Bun.sleep(state.delayMs);
        if (state.failWith)
          return Response.json(state.failWith.body, { status: state.failWith.status, headers: state.failWith.headers });
        return completion(body, onAbort);
      }
      return Response.json({ error: { message: "not found" } }, { status: 404 });
    },
  });
  state.url = `http://127.0.0.1:${server.port}/v1`;
  return state;
}

/** A URL where nothing listens: a port that was just free. */
export function unreachableUrl(): string {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port;
  probe.stop(true);
  return `http://127.0.0.1:${port}/v1`;
}
