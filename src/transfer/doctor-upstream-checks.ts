import type { Config } from "../config";
import { createSettings } from "../db/leases";
import type { Store } from "../db/store";
import type { Check } from "./doctor-check";

// `mnemo doctor`'s checks of what Mnemo calls out to: the embedding model (local files, or an
// OpenAI-compatible API) and the completions' upstream gateway.

const PROBE_TIMEOUT_MS = 3_000;

async function probe(url: string, headers: Record<string, string> = {}): Promise<string | null> {
  try {
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    await response.body?.cancel();
    return null;
  } catch (error) {
    return (error as Error).name === "TimeoutError"
      ? `no answer within ${PROBE_TIMEOUT_MS / 1000}s`
      : (error as Error).message;
  }
}

/** The outage the index writer recorded (vectors cannot be made now): said here as `/health` says it. */
async function vectorsUnavailable(store: Store | null): Promise<Check | null> {
  if (!store) return null;
  const { readVectorOutage, vectorsStatus } = await import("../search");
  const status = vectorsStatus(true, await readVectorOutage(createSettings(), store.db).catch(() => null));
  if (status === "ok") return null;
  return {
    name: "embedding model",
    status: "fail",
    detail: `vectors ${status}`,
    hint: "changes wait for their vectors and get them once the model is there: `mnemo models pull`, or `mnemo models install --from DIR` without network",
  };
}

export async function modelCheck(config: Config, store: Store | null = null): Promise<Check> {
  const name = "embedding model";
  const e = config.embeddings;
  if (e.provider === "none")
    return { name, status: "ok", detail: "embeddings off (EMBEDDINGS_PROVIDER=none): full-text search only" };
  const unavailable = await vectorsUnavailable(store);
  if (unavailable) return unavailable;
  if (e.provider === "openai") {
    const problem = await probe(
      `${e.url!.replace(/\/+$/, "")}/models`,
      e.apiKey ? { authorization: `Bearer ${e.apiKey}` } : {},
    );
    return problem
      ? {
          name,
          status: "fail",
          detail: `${e.url} unreachable: ${problem}`,
          hint: "check EMBEDDINGS_URL; writes queue vectors until it answers",
        }
      : { name, status: "ok", detail: `${e.model ?? "model"} at ${e.url}` };
  }
  const { checkModelFiles, getModelSpec } = await import("../search");
  const status = await checkModelFiles(e.modelsDir, getModelSpec(e.localModel, { pins: e.modelPins }));
  if (status.state === "present") return { name, status: "ok", detail: `${status.name} in ${status.path}` };
  const hint = `run \`mnemo models pull ${e.localModel}\`${e.autoDownload ? " (or let the server download it on first use)" : ""}`;
  return {
    name,
    status: e.autoDownload && status.state === "absent" ? "warn" : "fail",
    detail: `${status.name}: ${status.state}${status.problem ? ` (${status.problem})` : ""}`,
    hint,
  };
}

export async function gatewayCheck(config: Config): Promise<Check | null> {
  // The completions config arrives with the completions feature; read it defensively.
  const completions = (config as unknown as { completions?: { gatewayUrl?: string; gatewayApiKey?: string } })
    .completions;
  if (!completions?.gatewayUrl) return null;
  const problem = await probe(
    `${completions.gatewayUrl}/models`,
    completions.gatewayApiKey ? { authorization: `Bearer ${completions.gatewayApiKey}` } : {},
  );
  if (!problem) return { name: "upstream gateway", status: "ok", detail: `${completions.gatewayUrl} answers` };
  // The default (a local Ollama) is only a guess: its absence is a warning, a configured gateway's a failure.
  const isDefault = completions.gatewayUrl === "http://127.0.0.1:11434/v1";
  return {
    name: "upstream gateway",
    status: isDefault ? "warn" : "fail",
    detail: `${completions.gatewayUrl} unreachable: ${problem}`,
    hint: isDefault
      ? "chat completions need an upstream: set LLM_GATEWAY_URL, or start Ollama"
      : "check LLM_GATEWAY_URL and that the gateway runs",
  };
}
