import type { Admit } from "../completions/admission";
import type { Upstream } from "../completions/upstream";
import type { Config } from "../config";
import { pick } from "../lib/json-path";
import { looksEncrypted } from "../crypto/stored-text";
import type { Executor, Store } from "../db/store";
import type { Logger } from "../lib/log";
import type { MemoryService } from "../memories/service";
import type { MemorySource } from "../memories/record";
import { oneOf } from "../shared/aliases";
import { AppError, badRequest } from "../shared/app-error";
import type { UsageService } from "../usage/service";
import { countPromptTokens, countTextTokens, promptTokenBound } from "../usage/tokens";
import type { WorkspaceService } from "../workspaces/service";
import type { ExtractBody, ExtractResponse } from "./model";
import { decisionMessages, factsMessages } from "./prompts";
import { DecisionsReply, FactsReply, invalidReply, parseReply, type Decision } from "./reply";
import { createFormationApply, type MemoryOperation, type OperationOutcome, type Target } from "./apply";

/** Completion tokens each of the two calls may use: what the quota holds for them. */
const CALL_MAX_TOKENS = 2_048;
/** Similar memories shown to the model per fact. */
const CANDIDATES_PER_FACT = 5;
/** Characters of a memory shown to the model. */
const SHOWN_CHARS = 1_000;
/** What the quota holds for the decisions call's data (facts and memories) beyond its prompt. */
const DECISION_DATA_TOKENS = 8_000;
const HOUR = 3_600_000;
const ROUTE = "POST /v1/memories/extract";

export interface FormationDeps {
  config: Config;
  upstream: Upstream;
  admit: Admit;
  usage: UsageService;
  memories: MemoryService;
  workspaces: WorkspaceService;
  store: Store;
  log: Logger;
}

export interface ExtractRequest {
  userId: string;
  body: ExtractBody;
  dryRun: boolean;
  /** Where the conversation came from (extraction from a captured thread names it). */
  source?: Pick<MemorySource, "threadId" | "messageIds">;
  /**
   * Formation nobody asked for in this request (capture): it sees and changes only the
   * memories of its own scope (the workspace named, else the memories of no workspace),
   * and a change to a memory a person wrote becomes a proposal for that person.
   */
  automatic?: boolean;
  /** Runs in the transaction that applies the decisions (a job marks itself done there); throwing rolls them back. */
  inTransaction?: (tx: Executor) => Promise<void>;
}

interface Candidate extends Target {
  ref: string;
}

/**
 * Memory formation: the configured gateway model (MNEMO_MEMORY_MODEL, else DEFAULT_MODEL)
 * reads a conversation for durable facts about the user, then decides per fact, against
 * the user's most similar memories, to add, update, delete or leave; the decisions are
 * applied in one transaction with their history and source. The model only ever sees,
 * and may only name, memories of this user shown to it under short refs: a reply naming
 * anything else, or out of shape, or too long, is refused whole. Both calls are metered
 * to the user and held against their quota like completions.
 */
export function createFormationService(d: FormationDeps) {
  const model = d.config.completions.memoryModel ?? d.config.completions.defaultModel;

  async function call(messages: unknown[], used: { prompt: number; completion: number; requests: number }) {
    const reply = await d.upstream.json(
      "POST",
      "/chat/completions",
      { model, messages, temperature: 0, max_tokens: CALL_MAX_TOKENS, response_format: { type: "json_object" } },
      undefined,
    );
    let reported: unknown = null;
    try {
      reported = pick(JSON.parse(reply.text), "usage");
    } catch {}
    used.requests++;
    const promptTokens = pick(reported, "prompt_tokens");
    const completionTokens = pick(reported, "completion_tokens");
    used.prompt += typeof promptTokens === "number" ? promptTokens : await countPromptTokens(messages);
    used.completion +=
      typeof completionTokens === "number" ? completionTokens : await countTextTokens(reply.text.slice(0, 64_000));
    return reply.text;
  }

  const applier = createFormationApply(d.memories, d.store);

  /**
   * The user's memories most like each fact, under refs m1, m2, … (one ref per memory),
   * within `scope`: a workspace, null for the memories of no workspace, undefined for all.
   */
  async function candidatesFor(userId: string, facts: string[], scope: string | null | undefined) {
    const refs = new Map<string, Candidate>();
    const perFact: Candidate[][] = [];
    for (const fact of facts) {
      const found = await d.memories
        .similar(userId, fact, CANDIDATES_PER_FACT, scope)
        // The scope is the search's filter; checked again here, as what the model is shown must never leave it.
        .then((rows) => (scope === undefined ? rows : rows.filter((m) => m.workspaceId === scope)))
        .catch((error) => {
          d.log.warn("memory formation: similar memories not found; deciding without them", {
            reason: (error as Error).message,
          });
          return [];
        });
      perFact.push(
        found.map((m) => {
          if (!refs.has(m.id))
            refs.set(m.id, {
              ref: `m${refs.size + 1}`,
              id: m.id,
              content: m.content,
              updatedAt: m.updatedAt,
              workspaceId: m.workspaceId,
            });
          return refs.get(m.id)!;
        }),
      );
    }
    return perFact;
  }

  /** The decisions as operations; refuses the whole reply when one names a memory its fact was not shown, or two touch one memory. */
  function operationsOf(
    decisions: Decision[],
    facts: string[],
    perFact: Candidate[][],
    body: ExtractBody,
    workspaceId: string | null,
  ) {
    const byFact = new Map<number, Decision>();
    const touched = new Set<string>();
    for (const decision of decisions) {
      if (decision.content !== undefined && decision.content !== null && !decision.content.trim())
        throw invalidReply(`decision for fact ${decision.fact} has blank content`);
      if (decision.fact >= facts.length) throw invalidReply(`decision for fact ${decision.fact}, which does not exist`);
      if (byFact.has(decision.fact)) throw invalidReply(`two decisions for fact ${decision.fact}`);
      byFact.set(decision.fact, decision);
      if (decision.action === "update" || decision.action === "delete") {
        const target = perFact[decision.fact].find((c) => c.ref === decision.ref);
        if (!target) throw invalidReply(`fact ${decision.fact} names a memory it was not shown`);
        if (touched.has(target.id)) throw invalidReply("two decisions change one memory");
        touched.add(target.id);
        if (decision.action === "update" && !decision.content)
          throw invalidReply(`update of fact ${decision.fact} has no content`);
      }
    }
    const sessionId = oneOf<string>(body, ["session_id", "sessionId"]) ?? null;
    // As stored (UTC, ISO 8601): the memory list orders by it.
    const createdAt = body.timestamp === undefined ? undefined : new Date(body.timestamp).toISOString();
    return facts.map(
      (fact, i): { fact: string; op: MemoryOperation | null; target: Candidate | null; missing?: boolean } => {
        const decision = byFact.get(i);
        // A fact the model gave no decision for changes nothing, and says so apart from an explicit none.
        if (!decision) return { fact, op: null, target: null, missing: true };
        if (decision.action === "none") return { fact, op: null, target: null };
        if (decision.action === "add")
          return {
            fact,
            op: { action: "add", content: decision.content ?? fact, workspaceId, sessionId, createdAt },
            target: null,
          };
        const target = perFact[i].find((c) => c.ref === decision.ref)!;
        if (decision.action === "update")
          return { fact, op: { action: "update", id: target.id, content: decision.content! }, target };
        return { fact, op: { action: "delete", id: target.id }, target };
      },
    );
  }

  return {
    model,

    async extract(r: ExtractRequest): Promise<ExtractResponse> {
      const { config } = d;
      if (config.encryption.proxyMode && !config.completions.extractionInProxyMode) {
        throw new AppError(
          403,
          "forbidden",
          "memory extraction is off in reverse-proxy encryption mode (its memories would be stored in plaintext); the operator enables it with MNEMO_EXTRACTION_IN_PROXY_MODE=1",
        );
      }
      if (r.body.timestamp !== undefined && !Number.isFinite(Date.parse(r.body.timestamp)))
        throw badRequest("timestamp: must be a date-time (ISO 8601)");
      const workspaceId = oneOf<string>(r.body, ["workspaceId", "workspace_id"]) ?? null;
      if (workspaceId) await d.workspaces.requireOwned(r.userId, workspaceId);
      // Nothing is extracted from encrypted content: such messages never reach the model.
      const conversation = r.body.messages
        .filter((m) => m.content.trim() && !looksEncrypted(m.content))
        .map((m) => ({ role: m.role, content: m.content }));
      if (!conversation.length) return { applied: !r.dryRun, model, facts: [], decisions: [] };

      const at = d.usage.now();
      const factsPrompt = factsMessages(conversation);
      // Both calls: the conversation once, the decisions' facts and memories bounded by their caps.
      const promptTokens =
        promptTokenBound(factsPrompt) + promptTokenBound(decisionMessages([])) + DECISION_DATA_TOKENS;
      const admitted = await d.admit({
        userId: r.userId,
        windows: [
          {
            key: `principal:${r.userId}`,
            limit: config.completions.rateLimitPerPrincipalPerHour,
            windowMs: HOUR,
            label: `${config.completions.rateLimitPerPrincipalPerHour} per hour per principal`,
          },
        ],
        at,
        messages: factsPrompt,
        route: ROUTE,
        cost: { promptTokens, promptCounted: false, completionTokens: 2 * CALL_MAX_TOKENS, injectionTokens: 0 },
      });
      const used = { prompt: 0, completion: 0, requests: 0 };
      try {
        const facts = parseReply(await call(factsPrompt, used), FactsReply).facts;
        let planned: ReturnType<typeof operationsOf> = [];
        if (facts.length) {
          // Explicit extraction without a workspace weighs all the user's memories; automatic stays in its scope.
          const perFact = await candidatesFor(r.userId, facts, r.automatic ? workspaceId : (workspaceId ?? undefined));
          const shown = facts.map((text, fact) => ({
            fact,
            text,
            memories: perFact[fact].map(({ ref, content }) => ({ ref, content: content.slice(0, SHOWN_CHARS) })),
          }));
          const decisions = parseReply(await call(decisionMessages(shown), used), DecisionsReply).decisions;
          planned = operationsOf(decisions, facts, perFact, r.body, workspaceId);
        }
        const source: MemorySource = {
          kind: "extraction",
          threadId: r.source?.threadId ?? oneOf<string>(r.body, ["session_id", "sessionId"]) ?? null,
          messageIds: r.source?.messageIds ?? r.body.messages.flatMap((m) => (m.id ? [m.id] : [])),
          model,
        };
        let outcomes: OperationOutcome[];
        const automatic = r.automatic === true;
        if (r.dryRun)
          outcomes = await Promise.all(
            planned.map(({ op, target, missing }) => applier.preview(r.userId, op, target, automatic, missing)),
          );
        else {
          outcomes = await d.store.transaction(async (tx) => {
            const out: OperationOutcome[] = [];
            for (const { op, target, missing } of planned)
              out.push(
                op
                  ? await applier.apply(tx, r.userId, op, target, source, automatic)
                  : await applier.preview(r.userId, null, null, automatic, missing),
              );
            await r.inTransaction?.(tx);
            return out;
          });
        }
        return {
          applied: !r.dryRun,
          model,
          facts,
          decisions: planned.map(({ fact }, i) => ({ fact, ...outcomes[i] })),
        };
      } finally {
        // What the gateway was asked is metered, whatever came of it.
        if (used.requests) {
          await d.usage
            .settle(admitted.hold, {
              promptTokens: used.prompt,
              completionTokens: used.completion,
              requests: used.requests,
            })
            .catch((error) => {
              d.log.error("usage not recorded", { userId: r.userId, error: error as Error });
            });
        } else await d.usage.release(admitted.hold).catch(() => {});
      }
    },
  };
}
export type FormationService = ReturnType<typeof createFormationService>;
