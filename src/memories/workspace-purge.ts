import type { WorkspaceContents } from "../workspaces/contents";
import type { MemoryRepository } from "./repository";
import type { MemoryWrites } from "./writes";

/** The memories' part of a workspace, for its delete confirmation and its delete (through the one memory write). */
export function memoryWorkspaceContents(repo: MemoryRepository, writes: MemoryWrites): WorkspaceContents {
  return {
    name: "memories",
    count: async (tx, ownerId, workspaceId) => ({ memories: await repo.countInWorkspace(tx, ownerId, workspaceId) }),
    purge: async (tx, ownerId, workspaceId) => ({
      counts: { memories: await writes.deleteWorkspace(tx, ownerId, workspaceId) },
    }),
  };
}
