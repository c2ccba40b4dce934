import { t } from "elysia";
import { APP_HEADER, sessionCookie, type AuthService } from "../auth/service";
import { errorsFor } from "../shared/error-body";
import { createRouter } from "../lib/router";
import type { HealthInfo } from "./service";

export { healthInfo, type HealthInfo } from "./service";

const nullableTime = (description: string) => t.Nullable(t.String({ format: "date-time", description }));

const PublicHealth = {
  status: t.Union([t.Literal("ok"), t.Literal("degraded")], {
    description: "ok, or degraded while new records do not become searchable (index.status not ok); the HTTP status stays 200 either way",
  }),
  store: t.Union([t.Literal("sqlite"), t.Literal("postgres")], { description: "the engine of the store of record" }),
};

const HealthInfo = t.Object({
  ...PublicHealth,
  index: t.Optional(t.Object({
    uri: t.String({ description: "where the search index lives (a directory or s3://…)" }),
    writer: t.Boolean({ description: "whether this process writes the search index" }),
    replicaId: t.String({ description: "this process's id in the index writer election" }),
    writerId: t.Nullable(t.String({ description: "the id of the process that writes the index now" })),
    status: t.Union([t.Literal("ok"), t.Literal("behind"), t.Literal("failing")], {
      description: "failing: the writer's index writes fail (records are kept and indexed once writes succeed); behind: the oldest waiting change is older than 30 s",
    }),
    pending: t.Nullable(t.Integer({ description: "changes not yet searchable (full-text stage); null when the store of record does not answer" })),
    pendingVectors: t.Nullable(t.Integer({ description: "changes searchable by keyword, waiting for their vectors; 0 while vectors are unavailable (those changes get theirs once the model arrives)" })),
    oldestPendingAt: nullableTime("when the oldest change not yet searchable was written"),
    lastIndexedAt: nullableTime("this process's last index write (null on a replica that does not write)"),
    lastError: t.Nullable(t.String({ description: "the latest index write failure, on one line, while writes fail" })),
    failingSince: nullableTime("when the current run of index write failures began"),
    consecutiveFailures: t.Integer({ description: "failed index writes in a row (retried every second); 0 when writes succeed" }),
  }, { description: "only for a caller with a valid token: where the index lives, which process writes it, the last failure" })),
  vectors: t.Optional(t.String({
    description: "only for a caller with a valid token: `off` (no embedder configured), `ok`, or `unavailable: <reason>` while vectors cannot be made (model missing and download off, offline, a failed download, the endpoint down); search uses the other signals meanwhile",
  })),
  extractionJobs: t.Optional(t.Object({
    pending: t.Integer({ description: "waiting to run (new, or waiting out a retry's backoff)" }),
    running: t.Integer(),
    failed: t.Integer({ description: "failed on every attempt; the owner sees why in GET /v1/memories/extract/jobs" }),
  }, { description: "only for a caller with a valid token: memory extraction jobs of captured conversations, all users" })),
});

/**
 * `GET /health`: public liveness (`status`, `store`), for load balancers. The index's
 * details (its path, the writer's host and pid, the last write error) tell an outsider
 * about the machine, so they go only to a caller with a valid token, any scope; a token
 * that does not authenticate is refused (401), not ignored. `mnemo doctor` reads the data
 * dir itself and needs none of this.
 */
export const healthRoutes = (auth: AuthService, info: () => Promise<HealthInfo>) =>
  createRouter().get(
    "/health",
    async ({ request }) => {
      // A token, or the web app's session (its cookie with the app's header): the details too.
      const credentialed = request.headers.get("authorization") !== null || (request.headers.get(APP_HEADER) === "1" && sessionCookie(request.headers) !== null);
      if (credentialed) await auth.authenticateRequest(request.headers);
      const { status, store, index, vectors, extractionJobs } = await info();
      return credentialed ? { status, store, index, vectors, extractionJobs } : { status, store };
    },
    {
      response: { 200: HealthInfo, ...errorsFor(401, 403) },
      detail: {
        tags: ["health"],
        summary: "Liveness; with any valid token, the search index's state too",
        // Public; a bearer token is optional and adds the details.
        security: [{}, { bearer: [] }],
      },
    },
  );
