import type { AuthService } from "../auth/service";
import { authPlugin } from "../auth/plugin";
import { createRouter } from "../lib/router";
import { errorsFor } from "../shared/error-body";
import type { CaptureService } from "./capture";
import {
  CAPTURE_BODY_LIMIT,
  CaptureSettings,
  CaptureSettingsBody,
  EXTRACT_BODY_LIMIT,
  ExtractBody,
  ExtractQuery,
  ExtractResponse,
  FormationJob,
  FormationJobList,
  FormationJobParams,
} from "./model";
import type { FormationService } from "./service";
import { createFormationJobRepository, type FormationJobRepository } from "./jobs-repository";

export { createFormationService, type FormationService } from "./service";

/** `POST /v1/memories/extract`: memory formation from a conversation, on request. */
export function formationRoutes(auth: AuthService, formation: FormationService, capture: CaptureService) {
  return createRouter({ prefix: "/v1/memories" })
    .use(authPlugin(auth))
    .post(
      "/extract",
      async ({ principal, body, query }) => {
        // It spends the user's tokens on the gateway, as a completion does: `chat` as well.
        auth.requireScope(principal, "chat");
        return formation.extract({ userId: principal.userId, body, dryRun: query.dry_run === "true" });
      },
      {
        auth: "memory:write",
        body: ExtractBody,
        query: ExtractQuery,
        bodyLimit: EXTRACT_BODY_LIMIT,
        response: { 200: ExtractResponse, ...errorsFor(400, 401, 403, 404, 413, 415, 429, 500, 502, 503, 504) },
        detail: {
          tags: ["memories"],
          summary: "Extract memories from a conversation (add, update, delete or leave, decided by the memory model)",
          description:
            "Asks the memory model (MNEMO_MEMORY_MODEL, else DEFAULT_MODEL) for durable facts about the user, then for a decision per fact against the user's most similar memories; " +
            "applies them in one transaction, each with its history and source. `?dry_run=true` answers the decisions without applying them. Metered and held against the monthly quota like completions. " +
            "Client-encrypted messages are skipped. A model reply out of shape, too long or naming a memory it was not shown is refused whole: 502, nothing changed. " +
            "Needs the scopes memory:write and chat.",
        },
      },
    )
    .get("/extract/jobs", async ({ principal }) => capture.jobs(principal.userId), {
      auth: "memory:read",
      response: { 200: FormationJobList, ...errorsFor(401, 403, 500, 503) },
      detail: {
        tags: ["memories"],
        summary: "The caller's extraction jobs of captured conversations (X-Svc-Remember), newest first",
        description:
          "A job whose attempt failed is `retrying` (with `lastError` and `nextAttemptAt`) until its last attempt, then `failed`. A capture whose conversation could not be stored is a `failed` job too, with `captured: false`.",
      },
    })
    .post(
      "/extract/jobs/:id/retry",
      async ({ principal, params }) => {
        // A retry spends the user's tokens on the gateway, as an extraction does.
        auth.requireScope(principal, "chat");
        return capture.retry(principal.userId, params.id);
      },
      {
        auth: "memory:write",
        params: FormationJobParams,
        response: { 200: FormationJob, ...errorsFor(400, 401, 403, 404, 409, 500, 503) },
        detail: {
          tags: ["memories"],
          summary: "Run a failed (or retrying) extraction job again now, its attempts reset",
          description:
            "200 with the job, pending. 409 when it is pending, running or done, or when its conversation could not be stored (`captured: false`); another user's job is a 404. Needs the scopes memory:write and chat.",
        },
      },
    );
}

/** `GET`/`PUT /v1/me/capture`: the user's capture default (off unless set). */
export function captureSettingsRoutes(auth: AuthService, capture: CaptureService) {
  return createRouter({ prefix: "/v1/me" })
    .use(authPlugin(auth))
    .get("/capture", async ({ principal }) => capture.settings(principal.userId), {
      auth: "memory:read",
      response: { 200: CaptureSettings, ...errorsFor(401, 403, 500, 503) },
      detail: {
        tags: ["memories"],
        summary: "Whether the caller's completions are captured by default (off unless set)",
      },
    })
    .put("/capture", async ({ principal, body }) => capture.setSettings(principal.userId, body.remember), {
      auth: "memory:write",
      body: CaptureSettingsBody,
      bodyLimit: CAPTURE_BODY_LIMIT,
      response: { 200: CaptureSettings, ...errorsFor(400, 401, 403, 413, 415, 500, 503) },
      detail: {
        tags: ["memories"],
        summary:
          "Capture the caller's completions by default, or stop (X-Svc-Remember on a request still decides for it)",
      },
    });
}

/** The extraction jobs another writer queues in its own transaction (the chat import, capture's kind). */
export const extractionJobQueue: Pick<FormationJobRepository, "coveredMessageIds" | "enqueue"> =
  createFormationJobRepository();
