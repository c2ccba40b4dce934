import type { Executor, Store } from "../db/store";
import { newId } from "../lib/ids";
import type { MemorySource } from "../memories/record";
import type { MemoryService } from "../memories/service";

/** One change to a user's memories, as memory formation decides it. */
export type MemoryOperation =
  | { action: "add"; content: string; workspaceId: string | null; sessionId: string | null; createdAt?: string }
  | { action: "update"; id: string; content: string }
  | { action: "delete"; id: string };

/** What came of an operation: `none` when it changed nothing (a duplicate, a memory gone meanwhile). */
export interface OperationOutcome {
  action: "add" | "update" | "delete" | "none";
  memoryId: string | null;
  content: string | null;
  previous: string | null;
  reason?: "duplicate" | "missing" | "model" | "missing_decision";
  /** Automatic formation, a memory a person wrote: the change awaits that person (GET /v1/memories/proposals). */
  proposed?: true;
  /** The proposal made (none in a dry run). */
  proposalId?: string;
}

/** A memory shown to the model, as it was then. */
export interface Target {
  id: string;
  content: string;
  updatedAt: string;
  workspaceId: string | null;
}

/**
 * Applies formation's operations through the memories' one write (memories/writes.ts).
 * `automatic` (capture) changes by itself only memories extraction formed; a change to
 * one a person wrote becomes a proposal, and the memory stays as it is.
 */
export function createFormationApply(memories: Pick<MemoryService, "writes" | "proposals">, store: Store) {
  /** Whether an update or delete of `target` would be a proposal. */
  const proposes = async (tx: Executor, ownerId: string, target: Target, automatic: boolean) =>
    automatic && !(await memories.proposals.formedByExtraction(tx, ownerId, target.id));

  return {
    async apply(
      tx: Executor,
      ownerId: string,
      op: MemoryOperation,
      target: Target | null,
      source: MemorySource,
      automatic: boolean,
    ): Promise<OperationOutcome> {
      const now = new Date().toISOString();
      if (op.action === "add") {
        // `metadata.source` says where it came from where the app shows it, and is a search filter (`filters: {source: "extraction"}`).
        const row = {
          ownerId,
          id: newId("mem"),
          content: op.content,
          metadata: { source: source.kind },
          workspaceId: op.workspaceId,
          sessionId: op.sessionId,
          createdAt: op.createdAt ?? now,
          updatedAt: now,
        };
        const outcome = await memories.writes.insert(tx, row, source);
        if (!outcome.inserted)
          return {
            action: "none",
            memoryId: outcome.existing?.id ?? null,
            content: outcome.existing?.content ?? null,
            previous: null,
            reason: "duplicate",
          };
        return { action: "add", memoryId: row.id, content: op.content, previous: null };
      }
      if (target && (await proposes(tx, ownerId, target, automatic))) {
        // As the model saw it: accepting a proposal about a memory changed since is refused.
        const content = op.action === "update" ? op.content : null;
        const proposalId = await memories.proposals.propose(
          tx,
          ownerId,
          target,
          { action: op.action, content },
          source,
        );
        return { action: op.action, memoryId: op.id, content, previous: target.content, proposed: true, proposalId };
      }
      if (op.action === "update") {
        const outcome = await memories.writes.update(tx, ownerId, op.id, { content: op.content }, source);
        if (outcome.updated)
          return { action: "update", memoryId: op.id, content: op.content, previous: outcome.before.content };
        // Gone meanwhile, or another memory of the workspace already says this: nothing to change.
        return outcome.why === "missing"
          ? { action: "none", memoryId: op.id, content: null, previous: null, reason: "missing" }
          : {
              action: "none",
              memoryId: op.id,
              content: outcome.before?.content ?? null,
              previous: null,
              reason: "duplicate",
            };
      }
      // Extraction's delete keeps the text in the history, for the person to see what the model removed.
      const deleted = await memories.writes.delete(tx, ownerId, op.id, source, { erase: false });
      if (deleted === false || !deleted.deleted)
        return { action: "none", memoryId: op.id, content: null, previous: null, reason: "missing" };
      return { action: "delete", memoryId: op.id, content: null, previous: deleted.deleted.content };
    },

    /** What an operation would do, unapplied (dry run), or a decision to change nothing. */
    async preview(
      ownerId: string,
      op: MemoryOperation | null,
      target: Target | null,
      automatic: boolean,
      missing = false,
    ): Promise<OperationOutcome> {
      // `missing`: the model gave no decision for the fact, rather than deciding on none.
      if (!op)
        return {
          action: "none",
          memoryId: null,
          content: null,
          previous: null,
          reason: missing ? "missing_decision" : "model",
        };
      if (op.action === "add") return { action: "add", memoryId: null, content: op.content, previous: null };
      const proposed =
        target && (await proposes(store.db, ownerId, target, automatic)) ? { proposed: true as const } : {};
      if (op.action === "update")
        return {
          action: "update",
          memoryId: op.id,
          content: op.content,
          previous: target?.content ?? null,
          ...proposed,
        };
      return { action: "delete", memoryId: op.id, content: null, previous: target?.content ?? null, ...proposed };
    },
  };
}
export type FormationApply = ReturnType<typeof createFormationApply>;
