import { authPlugin } from "../auth/plugin";
import type { AuthService } from "../auth/service";
import { parseClientKey } from "../crypto/client-key";
import { badRequest } from "../shared/app-error";
import { errorsFor } from "../shared/error-body";
import { createRouter } from "../lib/router";
import { ChatCompletionBody, ChatCompletionResponse, ModelList } from "./model";
import type { ModelCatalog } from "./models";
import type { CompletionService } from "./service";

const MAX_WORKSPACE_ID = 256;

/** `X-Svc-Workspace`, checked like a workspace id anywhere else. */
function workspaceHeader(request: Request): string | null {
  const value = request.headers.get("x-svc-workspace");
  if (value === null) return null;
  const id = value.trim();
  if (!id || id.length > MAX_WORKSPACE_ID)
    throw badRequest(`X-Svc-Workspace: must be a workspace id of 1 to ${MAX_WORKSPACE_ID} characters`);
  return id;
}

/** `X-Client-Key`, checked up front: a malformed key is a 400, not a silently skipped note. */
function clientKeyHeader(request: Request): string | null {
  const value = request.headers.get("x-client-key");
  if (value === null || value === "") return null;
  parseClientKey(value, "X-Client-Key");
  return value;
}

const THREAD_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/** `X-Svc-Remember` (`true`, `false`; none: the user's default, off unless set) and `X-Svc-Thread`. */
function rememberHeaders(request: Request): { threadId: string | null } | false | null {
  const value = request.headers.get("x-svc-remember")?.trim().toLowerCase();
  if (value === undefined || value === "") return null;
  if (value === "false") return false;
  if (value !== "true") throw badRequest("X-Svc-Remember: must be true or false");
  // Read only with capture on: a client that sends its own X-Svc-Thread for other reasons is not refused.
  const thread = request.headers.get("x-svc-thread")?.trim() || null;
  if (thread !== null && !THREAD_ID.test(thread))
    throw badRequest("X-Svc-Thread: must be a thread id (letters, digits, _ . : -; at most 128)");
  return { threadId: thread };
}

/** `POST /v1/chat/completions` and `GET /v1/models` (docs/completions.md#routes; scope chat). */
export function completionRoutes(auth: AuthService, completions: CompletionService, models: ModelCatalog) {
  return createRouter({ prefix: "/v1" })
    .use(authPlugin(auth))
    .post(
      "/chat/completions",
      async ({ principal, body, request }) => {
        const reply = await completions.complete({
          principal,
          body,
          workspaceId: workspaceHeader(request),
          clientKey: clientKeyHeader(request),
          signal: request.signal,
          remember: rememberHeaders(request),
        });
        // A Response, so a stream goes out as it comes and a JSON reply byte for byte as the upstream sent it.
        return new Response(reply.body, { status: reply.status, headers: reply.headers });
      },
      {
        auth: "chat",
        body: ChatCompletionBody,
        response: { 200: ChatCompletionResponse, ...errorsFor(400, 401, 403, 404, 413, 415, 429, 500, 502, 503, 504) },
        detail: {
          tags: ["completions"],
          summary: "OpenAI-compatible chat completion with memory injection",
          description:
            "Every OpenAI field passes through to LLM_GATEWAY_URL; `memory` is Mnemo's. Headers: X-Svc-Shimmer, X-Svc-Memory-Count, X-Svc-Notes-Count, X-Svc-Overhead-Ms, X-RateLimit-Limit/Remaining/Reset.",
        },
      },
    )
    .get("/models", () => models.list(), {
      auth: "chat",
      response: { 200: ModelList, ...errorsFor(401, 403, 500, 503) },
      detail: { tags: ["completions"], summary: "Models: the curated list merged with the upstream's" },
    });
}
