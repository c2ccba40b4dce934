import type { DocumentsQueryService } from "../documents-query/service";
import type { Logger } from "../lib/log";
import type { MemoryRow } from "../memories/repository";
import type { SearchEngine } from "../search/query/engine";
import type { InjectedNote, Retrieved } from "./injection";

/** Decrypts a stored note value for injection; null when it cannot (no key, wrong key). */
export type NoteDecryptor = (userId: string, clientKeyHeader: string | null) => Promise<((value: string) => string | null) | null>;

export interface RetrieverDeps {
  engine: SearchEngine;
  documentsQuery: DocumentsQueryService;
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
  workspaceId: string | null;
  clientKey: string | null;
  /** `performance.now()` time past which the search answers from the index as it is. */
  deadline: number;
}

/**
 * What a completion injects: the owner's memories (of the workspace and personal ones
 * when `X-Svc-Workspace` names one) through the search engine with the window's
 * deadline, and, with a workspace, its notes through the documents query.
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
    return result.hits.map((hit) => ({ content: hit.text, createdAt: (hit.record as MemoryRow).createdAt }));
  }

  async function searchNotes(r: RetrieveRequest): Promise<InjectedNote[]> {
    if (!r.workspaceId) return [];
    const result = await documentsQuery.query(r.ownerId, { query: r.query, workspace_id: r.workspaceId, include: { notes: true }, top_k: r.limit });
    // A block that only repeats its document's title (the title block) says nothing more.
    const blocks = result.items.filter((item) => item.type === "block" && item.content.trim() !== (item.title ?? "").trim());
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
