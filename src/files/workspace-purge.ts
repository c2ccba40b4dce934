import type { Executor } from "../db/store";
import type { BlobStore } from "../blobs/store";
import type { Logger } from "../lib/log";
import type { Outbox } from "../search";
import type { WorkspaceContents } from "../workspaces/contents";
import type { FileRepository } from "./repository";

/**
 * A workspace's files (their rows, text blocks, presigned URLs and open uploads), for the
 * workspace delete. The rows and the index removal commit with the workspace's delete; the
 * bytes are removed from the blob store after it, as a single file delete does. Bytes a
 * crash left behind belong to no file from then on, and the orphan sweep removes them.
 */
/** The uploads' part of the purge: open upload sessions of the workspace (the uploads domain provides it). */
export interface WorkspaceUploadPurge {
  deleteWorkspace(tx: Executor, ownerId: string, workspaceId: string): Promise<string[]>;
}

export function fileWorkspaceContents(d: {
  repo: FileRepository;
  uploads: WorkspaceUploadPurge;
  blobs: BlobStore;
  outbox: Outbox;
  log: Logger;
}): WorkspaceContents {
  return {
    name: "files",
    count: async (tx, ownerId, workspaceId) => ({ files: await d.repo.countWorkspace(tx, ownerId, workspaceId) }),
    async purge(tx, ownerId, workspaceId) {
      const files = await d.repo.deleteWorkspace(tx, ownerId, workspaceId);
      const partBlobs = await d.uploads.deleteWorkspace(tx, ownerId, workspaceId);
      if (files.length)
        await d.outbox.enqueueMany(
          tx,
          files.map((f) => ({ ownerId, kind: "file" as const, sourceId: f.key })),
          "sync",
        );
      const blobIds = [...files.map((f) => f.blobId), ...partBlobs].filter(Boolean);
      return {
        counts: { files: files.length },
        afterCommit: async () => {
          for (const blobId of blobIds)
            await d.blobs.delete(blobId).catch((error) => d.log.warn("blob not removed", { error }));
        },
      };
    },
  };
}
