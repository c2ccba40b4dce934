import { t } from "elysia";
import { APP_HEADER, sessionCookie, type AuthService } from "../auth/service";
import { errorsFor } from "../shared/error-body";
import { createRouter } from "../lib/router";
import { OPERATOR_SCOPE } from "../auth/scopes";
import type { Health } from "./service";

export { createHealth, type Health, type OperatorHealth, type UserHealth } from "./service";

const nullableTime = (description: string) => t.Nullable(t.String({ format: "date-time", description }));

const PublicHealth = {
  status: t.Union([t.Literal("ok"), t.Literal("degraded")], {
    description:
      "ok, or degraded while new records do not become searchable (index.status not ok); the HTTP status stays 200 either way",
  }),
  store: t.Union([t.Literal("sqlite"), t.Literal("postgres")], { description: "the engine of the store of record" }),
};

const operatorOnly = "operator only";
const HealthInfo = t.Object({
  ...PublicHealth,
  index: t.Optional(
    t.Object(
      {
        status: t.Union([t.Literal("ok"), t.Literal("behind"), t.Literal("failing")], {
          description:
            "failing: the writer's index writes fail (records are kept and indexed once writes succeed); behind: the oldest waiting change is older than 30 s",
        }),
        pending: t.Nullable(
          t.Integer({
            description:
              "changes not yet searchable (full-text stage): the caller's own, or every user's for the operator; null when the store of record does not answer",
          }),
        ),
        pendingVectors: t.Nullable(
          t.Integer({
            description:
              "changes searchable by keyword, waiting for their vectors (the caller's own, or every user's for the operator); 0 while vectors are unavailable (those changes get theirs once the model arrives)",
          }),
        ),
        oldestPendingAt: nullableTime(
          "when the oldest change not yet searchable was written (the caller's own, or any user's for the operator)",
        ),
        uri: t.Optional(
          t.String({ description: `${operatorOnly}: where the search index lives (a directory or s3://…)` }),
        ),
        writer: t.Optional(t.Boolean({ description: `${operatorOnly}: whether this process writes the search index` })),
        replicaId: t.Optional(
          t.String({ description: `${operatorOnly}: this process's id in the index writer election (host and pid)` }),
        ),
        writerId: t.Optional(
          t.Nullable(t.String({ description: `${operatorOnly}: the id of the process that writes the index now` })),
        ),
        lastIndexedAt: t.Optional(
          nullableTime(`${operatorOnly}: this process's last index write (null on a replica that does not write)`),
        ),
        lastError: t.Optional(
          t.Nullable(
            t.String({
              description: `${operatorOnly}: the latest index write failure, on one line, while writes fail`,
            }),
          ),
        ),
        failingSince: t.Optional(nullableTime(`${operatorOnly}: when the current run of index write failures began`)),
        consecutiveFailures: t.Optional(
          t.Integer({
            description: `${operatorOnly}: failed index writes in a row (retried every second); 0 when writes succeed`,
          }),
        ),
      },
      {
        description:
          "only for a caller with a valid credential: the caller's own waiting changes; the operator sees the server's too",
      },
    ),
  ),
  vectors: t.Optional(
    t.String({
      description:
        "only for a caller with a valid token: `off` (no embedder configured), `ok`, or `unavailable: <reason>` while vectors cannot be made (model missing and download off, offline, a failed download, the endpoint down); search uses the other signals meanwhile",
    }),
  ),
  extractionJobs: t.Optional(
    t.Object(
      {
        pending: t.Integer({ description: "waiting to run (new, or waiting out a retry's backoff)" }),
        running: t.Integer(),
        failed: t.Integer({
          description: "failed on every attempt; the owner sees why in GET /v1/memories/extract/jobs",
        }),
      },
      {
        description:
          "only for a caller with a valid credential: memory extraction jobs of captured conversations, the caller's own (every user's for the operator)",
      },
    ),
  ),
});

/**
 * `GET /health`: public liveness (`status`, `store`), for load balancers. With a valid
 * credential, the caller's own waiting changes and extraction jobs. What describes the
 * server or other users (the index's path, the replicas' host and pid, the last write
 * error, counts over all users) goes only to a credential with the `operator` scope
 * (`mnemo keys create --operator`); `mnemo doctor` reads the data dir itself and needs
 * none of this. A credential that does not authenticate is refused (401), not ignored.
 */
export const healthRoutes = (auth: AuthService, health: Health) =>
  createRouter().get(
    "/health",
    async ({ request }) => {
      // A token, or the web app's session (its cookie with the app's header).
      const credentialed =
        request.headers.get("authorization") !== null ||
        (request.headers.get(APP_HEADER) === "1" && sessionCookie(request.headers) !== null);
      if (!credentialed) return health.forAnyone();
      const principal = await auth.authenticateRequest(request.headers);
      return principal.scopes.has(OPERATOR_SCOPE) ? health.forOperator() : health.forUser(principal.userId);
    },
    {
      response: { 200: HealthInfo, ...errorsFor(401, 403) },
      detail: {
        tags: ["health"],
        summary:
          "Liveness; with a valid credential, the caller's own index backlog and jobs; with an operator key, the server's index state",
        // Public; a bearer token is optional and adds the details.
        security: [{}, { bearer: [] }],
      },
    },
  );
