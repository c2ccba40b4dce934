import { badRequest, notFound } from "../errors/app-error";
import { newId } from "../lib/ids";
import type { Workspace } from "./model";
import type { WorkspaceRepository, WorkspaceRow } from "./repository";

const toWorkspace = (row: WorkspaceRow): Workspace => ({ id: row.id, name: row.name, createdAt: row.createdAt, updatedAt: row.updatedAt });

/** Workspaces: named scopes that hold documents, notes, chat threads and derived artifacts. */
export function createWorkspaceService(repo: WorkspaceRepository) {
  return {
    list(ownerId: string): Workspace[] {
      return repo.list(ownerId).map(toWorkspace);
    },

    create(ownerId: string, name: string): Workspace {
      if (!name.trim()) throw badRequest("name: must not be blank");
      const now = new Date().toISOString();
      const row = { ownerId, id: newId("ws"), name, createdAt: now, updatedAt: now };
      repo.insert(row);
      return toWorkspace(row);
    },

    get(ownerId: string, workspaceId: string): Workspace {
      return toWorkspace(this.requireOwned(ownerId, workspaceId));
    },

    /**
     * The ownership check every workspace-scoped route runs first. Another user's
     * workspace answers exactly like a missing one, so ids leak nothing.
     */
    requireOwned(ownerId: string, workspaceId: string): WorkspaceRow {
      const row = repo.get(ownerId, workspaceId);
      if (!row) throw notFound(`workspace '${workspaceId}' not found`);
      return row;
    },
  };
}
export type WorkspaceService = ReturnType<typeof createWorkspaceService>;
