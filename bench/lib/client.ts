/** The bench's HTTP client: the public API only, with the status checked on every call. */

export interface SearchResponse {
  results: Array<{ id: string; content: string; metadata: Record<string, unknown>; score: number }>;
  mode: string;
  strategy: string;
}

/** An unexpected response; carries the reproduction (method, path, body, status, answer). */
export class HttpError extends Error {}

export function client(baseUrl: string, userId: string) {
  const headers = { authorization: `Bearer mock-token-${userId}`, "content-type": "application/json" };
  async function post<T>(path: string, body: unknown, expected: number | number[]): Promise<T> {
    const response = await fetch(baseUrl + path, { method: "POST", headers, body: JSON.stringify(body) });
    const text = await response.text();
    if (!(Array.isArray(expected) ? expected : [expected]).includes(response.status)) {
      throw new HttpError(
        `POST ${path} ${JSON.stringify(body).slice(0, 300)} → ${response.status} (expected ${expected}): ${text.slice(0, 500)}`,
      );
    }
    return JSON.parse(text) as T;
  }
  return {
    addMemory: (content: string, metadata?: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      // 200: an exact duplicate of a text stored before (the generated corpora repeat ~0.6–3% of their texts), not stored again.
      post<{ id: string }>("/v1/memories", { content, metadata, ...extra }, [201, 200]),
    search: (query: string, limit = 10, extra: Record<string, unknown> = {}) =>
      post<SearchResponse>("/v1/memories/search", { query, limit, ...extra }, 200),
  };
}

/**
 * Stores `texts` with `concurrency` clients pulling from one queue (one user). With
 * several base URLs (replicas), client k talks to `baseUrl[k % length]`.
 * Returns wall time and per-request latencies in milliseconds.
 */
export async function ingest(
  baseUrl: string | string[],
  userId: string,
  texts: string[],
  concurrency: number,
  metadata?: (i: number) => Record<string, unknown>,
) {
  const urls = Array.isArray(baseUrl) ? baseUrl : [baseUrl];
  const latencies = new Array<number>(texts.length);
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, k) => {
      const api = client(urls[k % urls.length], userId);
      for (let i = next++; i < texts.length; i = next++) {
        const t0 = performance.now();
        await api.addMemory(texts[i], metadata?.(i));
        latencies[i] = performance.now() - t0;
      }
    }),
  );
  return { wallMs: performance.now() - start, latencies };
}
