import { t } from "elysia";
import { KB, type BodyLimit } from "../lib/body-limits";

/** Messages one extraction reads, and the characters of each. */
export const MAX_EXTRACT_MESSAGES = 100;
export const MAX_MESSAGE_CHARS = 16_000;
/** 100 messages of 16,000 characters, with room for escaping. */
export const EXTRACT_BODY_LIMIT: BodyLimit = { bytes: 4_096 * KB };

const Scope = t.String({ minLength: 1, maxLength: 256 });

export const ExtractMessage = t.Object({
  role: t.Union([t.Literal("user"), t.Literal("assistant"), t.Literal("system")]),
  content: t.String({
    maxLength: MAX_MESSAGE_CHARS,
    description: "the text; client-encrypted text is skipped, never sent to the model",
  }),
  id: t.Optional(
    t.String({
      minLength: 1,
      maxLength: 128,
      description: "the message's id, recorded as the source of what it yields",
    }),
  ),
});

export const ExtractBody = t.Object({
  messages: t.Array(ExtractMessage, { minItems: 1, maxItems: MAX_EXTRACT_MESSAGES }),
  workspaceId: t.Optional(Scope),
  workspace_id: t.Optional(Scope),
  session_id: t.Optional(Scope),
  sessionId: t.Optional(Scope),
  timestamp: t.Optional(
    t.String({
      format: "date-time",
      description: "when the conversation happened: the creation date of memories it adds",
    }),
  ),
});
export type ExtractBody = typeof ExtractBody.static;

export const ExtractQuery = t.Object({
  dry_run: t.Optional(
    t.Union([t.Literal("true"), t.Literal("false")], {
      description: "true: answer the decisions without applying them",
    }),
  ),
});

export const ExtractDecision = t.Object({
  fact: t.String({ description: "the fact the model extracted" }),
  action: t.Union([t.Literal("add"), t.Literal("update"), t.Literal("delete"), t.Literal("none")]),
  memoryId: t.Union([t.String(), t.Null()], {
    description: "the memory added, updated or deleted (none: the duplicate or the memory left as it is)",
  }),
  content: t.Union([t.String(), t.Null()], { description: "the memory's content after the decision" }),
  previous: t.Union([t.String(), t.Null()], { description: "update, delete: the content before" }),
  reason: t.Optional(
    t.Union([t.Literal("duplicate"), t.Literal("missing"), t.Literal("model"), t.Literal("missing_decision")], {
      description:
        "none: why nothing changed (model: the model decided so; missing_decision: the model gave no decision for the fact)",
    }),
  ),
  proposed: t.Optional(
    t.Literal(true, {
      description:
        "update, delete by automatic formation (capture) of a memory a person wrote: not applied, proposed to the person",
    }),
  ),
  proposalId: t.Optional(
    t.String({ description: "proposed: the proposal (GET /v1/memories/proposals); absent in a dry run" }),
  ),
});

export const ExtractResponse = t.Object({
  applied: t.Boolean({ description: "false for dry_run (nothing was written)" }),
  model: t.String(),
  facts: t.Array(t.String()),
  decisions: t.Array(ExtractDecision),
});
export type ExtractResponse = typeof ExtractResponse.static;

export const FormationJob = t.Object({
  id: t.String({ description: "job_…" }),
  status: t.Union(
    [t.Literal("pending"), t.Literal("running"), t.Literal("retrying"), t.Literal("done"), t.Literal("failed")],
    {
      description:
        "retrying: its last attempt failed (lastError), the next is due at nextAttemptAt; failed: no attempt is left, or the capture itself failed",
    },
  ),
  attempts: t.Integer({ minimum: 0, description: "attempts since it was queued (a retry starts again from 0)" }),
  lastError: t.Union([t.String(), t.Null()], {
    description: "why the last attempt failed (Mnemo's message, never the gateway's text)",
  }),
  nextAttemptAt: t.Union([t.String({ format: "date-time" }), t.Null()], {
    description: "pending and retrying: when it is due",
  }),
  captured: t.Boolean({
    description: "false: the conversation could not be stored (nothing of it was kept), so the job cannot be retried",
  }),
  retryable: t.Boolean({
    description: "POST …/retry queues it again now: failed or retrying, and its conversation is stored",
  }),
  threadId: t.String(),
  workspaceId: t.Union([t.String(), t.Null()]),
  createdAt: t.String({ format: "date-time" }),
  updatedAt: t.String({ format: "date-time" }),
});
export type FormationJob = typeof FormationJob.static;

export const FormationJobList = t.Object({
  data: t.Array(FormationJob, { description: "the latest 100, newest first" }),
});

export const FormationJobParams = t.Object({
  id: t.String({ minLength: 1, maxLength: 128, description: "the job's id (job_…)" }),
});

/** `PUT /v1/me/capture`: a boolean. */
export const CAPTURE_BODY_LIMIT: BodyLimit = { bytes: 1 * KB };
export const CaptureSettingsBody = t.Object({
  remember: t.Boolean({
    description:
      "capture completions that send no X-Svc-Remember header (X-Svc-Remember: false still opts a request out)",
  }),
});
export const CaptureSettings = t.Object({
  remember: t.Boolean({
    description: "whether completions without X-Svc-Remember are captured; false unless the user set it",
  }),
  available: t.Boolean({
    description:
      "false in reverse-proxy encryption mode unless the operator allowed extraction: nothing is captured then",
  }),
});
