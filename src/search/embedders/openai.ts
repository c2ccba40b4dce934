import { EmbedderUnavailableError, normalize, type Embedder } from "./embedder";

export interface OpenAiEmbedderOptions {
  /** Base URL of an OpenAI-compatible API, e.g. http://localhost:11434/v1. */
  url: string;
  model: string;
  apiKey?: string;
  timeoutMs: number;
}

/**
 * Any OpenAI-compatible `POST /embeddings` endpoint (OpenAI, Ollama, LM Studio, TEI).
 * Failures surface as EmbedderUnavailableError so writes and searches degrade.
 */
export function createOpenAiEmbedder({ url, model, apiKey, timeoutMs }: OpenAiEmbedderOptions): Embedder {
  const endpoint = `${url.replace(/\/+$/, "")}/embeddings`;
  return {
    provider: "openai",
    spaceId: `openai:${model}`,
    async embed(texts, _purpose, signal) {
      if (texts.length === 0) return [];
      let response: Response;
      try {
        response = await fetch(endpoint, {
          method: "POST",
          headers: { "content-type": "application/json", ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
          body: JSON.stringify({ model, input: texts }),
          signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        throw new EmbedderUnavailableError(`embeddings endpoint unreachable: ${(error as Error).message}`);
      }
      if (!response.ok) throw new EmbedderUnavailableError(`embeddings endpoint answered ${response.status}`);
      const body = (await response.json().catch(() => null)) as {
        data?: Array<{ index?: number; embedding?: number[] }>;
      } | null;
      const data = body?.data;
      if (!Array.isArray(data) || data.length !== texts.length)
        throw new EmbedderUnavailableError("embeddings endpoint returned a malformed body");
      const ordered = [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
      return ordered.map((item) => {
        if (!Array.isArray(item.embedding) || item.embedding.length === 0)
          throw new EmbedderUnavailableError("embeddings endpoint returned an empty vector");
        return normalize(Float32Array.from(item.embedding));
      });
    },
  };
}
