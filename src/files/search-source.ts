import type { Executor } from "../db/store";
import { groupByOwner, sourceKey, type SearchItem, type SearchSource } from "../search";
import type { FileRepository } from "./repository";

/**
 * Feeds text files to the search index: sourceId = file key, one item per stored text
 * block (itemId = `<key>#<position>`), in the file's workspace, document type `file`,
 * with the file's name and content type as filterable metadata. A deleted file has no
 * row, so the indexer removes its items.
 */
export function fileSearchSource(repo: FileRepository): SearchSource<undefined, "file"> {
  return {
    kind: "file",
    async load(tx: Executor, refs) {
      const out = new Map<string, SearchItem[]>();
      for (const [ownerId, keys] of groupByOwner(refs)) {
        const files = await repo.getMany(tx, ownerId, keys);
        const blocks = await repo.blocks(
          tx,
          ownerId,
          files.map((file) => file.key),
        );
        for (const file of files) {
          const ref = { ownerId, kind: "file" as const, sourceId: file.key };
          out.set(
            sourceKey(ref),
            (blocks.get(file.key) ?? []).map((text, position) => ({
              ...ref,
              itemId: `${file.key}#${position}`,
              workspaceId: file.workspaceId,
              sessionId: null,
              documentType: "file",
              metadata: { filename: file.name, contentType: file.contentType },
              createdAtMs: Date.parse(file.createdAt),
              text,
            })),
          );
        }
      }
      return out;
    },
    async *listAll(tx: Executor) {
      for await (const file of repo.keysBySeq(tx))
        yield { ownerId: file.ownerId, kind: "file" as const, sourceId: file.key };
    },
  };
}
