import type { Logger } from "../lib/log";
import type { ModelEntry } from "./model";
import type { Upstream } from "./upstream";

/** How long the upstream's list is re-used, and how long a failure is before asking again. */
const FRESH_MS = 60_000;
const RETRY_FAILED_MS = 15_000;
/** `/v1/models` never waits longer than this (or the gateway timeout, if shorter) for the upstream. */
const LIST_TIMEOUT_MS = 5_000;

/**
 * `GET /v1/models`: the curated list (config, several providers), then the upstream's own
 * `/models` when reachable, without duplicates. The upstream's list is cached; a stale
 * list is answered at once while a refresh runs in the background.
 */
export function createModelCatalog({
  upstream,
  curated,
  defaultModel,
  timeoutMs,
  log,
}: {
  upstream: Upstream;
  curated: Array<{ id: string; owned_by: string }>;
  defaultModel: string;
  timeoutMs: number;
  log: Logger;
}) {
  let cached: { models: ModelEntry[]; at: number } | null = null;
  let failedAt = -Infinity;
  let refreshing: Promise<void> | null = null;

  function refresh(): Promise<void> {
    refreshing ??= (async () => {
      try {
        const reply = await upstream.json("GET", "/models", undefined, undefined, Math.min(timeoutMs, LIST_TIMEOUT_MS));
        const data = JSON.parse(reply.text)?.data;
        const models = (Array.isArray(data) ? data : []).flatMap((m: { id?: unknown; owned_by?: unknown }) =>
          typeof m?.id === "string" && m.id
            ? [
                {
                  id: m.id,
                  object: "model" as const,
                  owned_by: typeof m.owned_by === "string" && m.owned_by ? m.owned_by : "upstream",
                },
              ]
            : [],
        );
        cached = { models, at: Date.now() };
      } catch (error) {
        failedAt = Date.now();
        log.debug("upstream model list unavailable; curated list only", { reason: (error as Error).message });
      } finally {
        refreshing = null;
      }
    })();
    return refreshing;
  }

  return {
    async list(): Promise<{ object: "list"; data: ModelEntry[] }> {
      const now = Date.now();
      const stale = !cached || now - cached.at > FRESH_MS;
      if (stale && now - failedAt > RETRY_FAILED_MS) {
        if (cached) refresh().catch(() => {});
        else await refresh();
      }
      const entries: ModelEntry[] = [];
      const seen = new Set<string>();
      const add = (m: { id: string; owned_by: string }) => {
        if (seen.has(m.id)) return;
        seen.add(m.id);
        entries.push({ id: m.id, object: "model", owned_by: m.owned_by });
      };
      curated.forEach(add);
      (cached?.models ?? []).forEach(add);
      // The default model is always listed, whatever the curated list says.
      add({ id: defaultModel, owned_by: "mnemo" });
      return { object: "list", data: entries };
    },
  };
}
export type ModelCatalog = ReturnType<typeof createModelCatalog>;
