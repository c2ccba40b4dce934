import type { NoteDecryptor } from "../crypto/stored-text";
import type { DocumentsQueryService } from "../documents-query/service";
import type { Logger } from "../lib/log";
import type { MemoryRow } from "../memories/record";
import type { SearchEngine } from "../search";
import type { InjectedNote, Retrieved } from "./injection";

export interface RetrieverDeps {
  /** The read path: memory hits carry their stored row; blocks are the workspace's notes. */
  engine: SearchEngine<{ memory: MemoryRow; block: unknown }>;
  /** The titles of the notes found, as the documents query shows them. */
  documentsQuery: Pick<DocumentsQueryService, "documentTitles">;
  log: Logger;
  /** Present once encryption is wired; without it, notes that look encrypted are skipped. */
  decryptor?: NoteDecryptor;
  /** Tells an encrypted value (`iv:tag:ciphertext`, an envelope) from plain text. */
  looksEncrypted: (value: string) => boolean;
}

export interface RetrieveRequest {
  ownerId: string;
  query: string;
  limit: number;
  /** `X-Svc-Workspace`: the caller's, as the completion service checked (once, beside admission) before retrieval. */
  workspaceId: string | null;
  clientKey: string | null;
  /** `performance.now()` time past which the search answers from the index as it is. */
  deadline: number;
}

/**
 * What a completion injects, each asked of the search engine with the window's deadline:
 * the owner's memories (of the workspace and personal ones when `X-Svc-Workspace` names
 * one) and, with a workspace, its notes (document blocks). The workspace's ownership is
 * not checked again here: the completion service checked it before retrieval began.
 */
export function createRetriever({ engine, documentsQuery, log, decryptor, looksEncrypted }: RetrieverDeps) {
  async function searchMemories(r: RetrieveRequest) {
    const result = await engine.search({
      ownerId: r.ownerId,
      query: r.query,
      kinds: ["memory"],
      filters: r.workspaceId ? { workspaceId: r.workspaceId, includeUnscoped: true } : {},
      limit: r.limit,
      deadline: r.deadline,
    });
    // The dates come from the store of record, read back by the search with every hit.
    return result.hits.map((hit) => ({
      content: hit.text,
      createdAt: hit.record.createdAt,
      extracted: hit.record.metadata.source === "extraction",
    }));
  }

  async function searchNotes(r: RetrieveRequest): Promise<InjectedNote[]> {
    if (!r.workspaceId) return [];
    const result = await engine.search({
      ownerId: r.ownerId,
      query: r.query,
      kinds: ["block"],
      filters: { workspaceId: r.workspaceId },
      limit: r.limit,
      deadline: r.deadline,
    });
    const titles = await documentsQuery.documentTitles(r.ownerId, [...new Set(result.hits.map((hit) => hit.sourceId))]);
    // A block that only repeats its document's title (the title block) says nothing more.
    const blocks = result.hits
      .map((hit) => ({ content: hit.text, title: titles.get(hit.sourceId) ?? null }))
      .filter((block) => block.content.trim() !== (block.title ?? "").trim());
    const encrypted = blocks.some((b) => looksEncrypted(b.content) || (b.title !== null && looksEncrypted(b.title)));
    const decrypt = encrypted && decryptor ? await decryptor(r.ownerId, r.clientKey) : null;
    let skipped = 0;
    const notes = blocks.flatMap((b) => {
      const content = looksEncrypted(b.content) ? (decrypt?.(b.content) ?? null) : b.content;
      const title = b.title !== null && looksEncrypted(b.title) ? (decrypt?.(b.title) ?? null) : b.title;
      if (content === null) {
        skipped++;
        return [];
      }
      return [{ title, content }];
    });
    if (skipped) log.debug("encrypted notes skipped (no usable client key)", { skipped });
    return notes;
  }

  return {
    async retrieve(r: RetrieveRequest): Promise<Retrieved> {
      const [memoryItems, notes] = await Promise.all([searchMemories(r), searchNotes(r)]);
      return { memories: memoryItems, notes };
    },
  };
}
export type Retriever = ReturnType<typeof createRetriever>;
