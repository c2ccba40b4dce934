import type { Executor, Store } from "../db/store";
import { newId } from "../lib/ids";
import { badRequest, conflict, notFound } from "../shared/app-error";
import type { Cursors } from "../shared/cursors";
import { parseIntegerParam } from "../shared/query";
import type { MemoryHistoryRepository, MemorySource } from "./history-repository";
import type { MemoryProposalRecord } from "./model";
import type { MemoryProposalRepository, ProposalAction, ProposalRow } from "./proposals-repository";
import type { MemoryRepository, MemoryRow } from "./repository";
import { toMemoryRecord } from "./record";
import type { MemoryWrites } from "./writes";

export interface MemoryProposalDeps {
  repo: MemoryRepository;
  history: MemoryHistoryRepository;
  proposals: MemoryProposalRepository;
  writes: MemoryWrites;
  store: Store;
  cursors: Cursors;
}

/** The proposal list's cursors: the last proposal's position, sealed per owner. */
const LIST_NAME = "memory-proposals";

const toRecord = (p: ProposalRow, memory: MemoryRow | null): MemoryProposalRecord => ({
  id: p.id,
  memoryId: p.memoryId,
  memory: memory ? toMemoryRecord(memory) : null,
  workspaceId: p.workspaceId,
  action: p.action,
  content: p.content,
  threadId: p.threadId,
  messageIds: p.messageIds,
  model: p.model,
  createdAt: p.createdAt,
  status: p.status,
});

/**
 * Proposals: what automatic memory formation (capture) would change in memories a person
 * wrote. It may add memories and change those extraction formed by itself, but a memory
 * whose versions are not all extraction's (the person wrote or edited it) is changed only
 * once its person accepts; until then it stays exactly as it is.
 */
export function createMemoryProposals({ repo, history, proposals, writes, store, cursors }: MemoryProposalDeps) {
  return {
    /** Whether automatic formation may change this memory by itself: every version of it is extraction's. */
    async formedByExtraction(tx: Executor, ownerId: string, memoryId: string): Promise<boolean> {
      const kinds = await history.sourceKinds(tx, ownerId, memoryId);
      return kinds.length > 0 && kinds.every((kind) => kind === "extraction");
    },

    /** Records a proposal to change `memory` as the model saw it; its id. */
    async propose(
      tx: Executor,
      ownerId: string,
      memory: Pick<MemoryRow, "id" | "workspaceId" | "updatedAt">,
      change: { action: ProposalAction; content: string | null },
      source: MemorySource,
    ): Promise<string> {
      const id = newId("prop");
      await proposals.insert(tx, {
        ownerId,
        id,
        memoryId: memory.id,
        workspaceId: memory.workspaceId,
        action: change.action,
        content: change.action === "update" ? change.content : null,
        memoryUpdatedAt: memory.updatedAt,
        threadId: source.threadId ?? null,
        messageIds: source.messageIds ?? [],
        model: source.model ?? null,
        createdAt: new Date().toISOString(),
      });
      return id;
    },

    /** `GET /v1/memories/proposals`: the owner's pending proposals, oldest first, each with its memory as it is now. */
    async list(ownerId: string, query: { limit?: string; cursor?: string }) {
      const limit = parseIntegerParam("limit", query.limit, { min: 1, max: 1000, fallback: 100 });
      let after = 0;
      if (query.cursor) {
        after = Number(cursors.decode(ownerId, LIST_NAME, query.cursor, "cursor"));
        if (!Number.isSafeInteger(after)) throw badRequest("cursor: is not a cursor returned by this API");
      }
      const rows = await proposals.pendingPage(store.db, ownerId, after, limit + 1);
      const page = rows.slice(0, limit);
      const memories = await repo.getMany(store.db, ownerId, [...new Set(page.map((p) => p.memoryId))]);
      const hasMore = rows.length > limit;
      return {
        data: page.map((p) => toRecord(p, memories.get(p.memoryId) ?? null)),
        nextCursor: hasMore ? cursors.encode(ownerId, LIST_NAME, String(page[page.length - 1].seq)) : null,
        hasMore,
      };
    },

    /**
     * Applies a pending proposal through the memory write, as extraction the person
     * accepted. A memory changed or deleted since it was proposed is left alone: 409.
     */
    async accept(ownerId: string, id: string): Promise<MemoryProposalRecord> {
      return store.transaction(async (tx) => {
        const proposal = await pending(tx, ownerId, id);
        const memory = await repo.get(tx, ownerId, proposal.memoryId);
        if (!memory) throw conflict(`proposal '${id}': its memory was deleted since it was proposed`);
        if (memory.updatedAt !== proposal.memoryUpdatedAt)
          throw conflict(`proposal '${id}': its memory was changed since it was proposed`);
        // Decided first: of two accepts at once, the second finds it decided.
        if (!(await proposals.decide(tx, ownerId, id, "accepted", new Date().toISOString())))
          throw conflict(`proposal '${id}': was decided already`);
        const source: MemorySource = {
          kind: "extraction",
          threadId: proposal.threadId,
          messageIds: proposal.messageIds,
          model: proposal.model,
          proposalId: proposal.id,
        };
        let after: MemoryRow | null = null;
        if (proposal.action === "update") {
          const outcome = await writes.update(tx, ownerId, memory.id, { content: proposal.content! }, source);
          if (!outcome.updated) throw conflict(`proposal '${id}': another memory of this workspace already says this`);
          after = outcome.updated;
        } else {
          // The person decided it: their delete erases, as any delete of theirs does.
          await writes.delete(tx, ownerId, memory.id, source, { erase: true });
        }
        return { ...toRecord(proposal, after), status: "accepted" as const };
      });
    },

    /** Rejects a pending proposal: its memory stays as it is. */
    async reject(ownerId: string, id: string): Promise<MemoryProposalRecord> {
      return store.transaction(async (tx) => {
        const proposal = await pending(tx, ownerId, id);
        if (!(await proposals.decide(tx, ownerId, id, "rejected", new Date().toISOString())))
          throw conflict(`proposal '${id}': was decided already`);
        return { ...toRecord(proposal, await repo.get(tx, ownerId, proposal.memoryId)), status: "rejected" as const };
      });
    },
  };

  async function pending(tx: Executor, ownerId: string, id: string): Promise<ProposalRow> {
    const proposal = await proposals.get(tx, ownerId, id);
    // Another user's proposal answers like a missing one.
    if (!proposal) throw notFound(`proposal '${id}' not found`);
    if (proposal.status !== "pending") throw conflict(`proposal '${id}': was ${proposal.status} already`);
    return proposal;
  }
}
export type MemoryProposals = ReturnType<typeof createMemoryProposals>;
