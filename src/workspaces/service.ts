import type { Executor, Store } from "../db/store";
import { badRequest, notFound } from "../shared/app-error";
import type { Cursors } from "../shared/cursors";
import { newId } from "../lib/ids";
import { pager, seqAfter, type Page, type PageRequest } from "../shared/pagination";
import type { Workspace } from "./model";
import type { ArtifactRepository, WorkspaceRepository, WorkspaceRow } from "./repository";

/** What another domain may do with a workspace's artifacts, inside its own transaction: notes keep the notebook registry there, the derived index its manifest and edges. */
export type ArtifactAccess = Pick<ArtifactRepository, "get" | "put" | "delete">;
export type { ArtifactKind } from "./repository";

const toWorkspace = (row: WorkspaceRow): Workspace => ({
  id: row.id,
  name: row.name,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

/** Workspaces: named scopes that hold documents, notes, chat threads and derived artifacts. */
export function createWorkspaceService({
  repo,
  store,
  cursors,
}: {
  repo: WorkspaceRepository;
  store: Store;
  cursors: Cursors;
}) {
  /**
   * The ownership check every workspace-scoped route runs first. Another user's
   * workspace answers exactly like a missing one, so ids leak nothing. Inside a
   * transaction, pass its `tx`.
   */
  async function requireOwned(ownerId: string, workspaceId: string, tx: Executor = store.db): Promise<WorkspaceRow> {
    const row = await repo.get(tx, ownerId, workspaceId);
    if (!row) throw notFound(`workspace '${workspaceId}' not found`);
    return row;
  }

  return {
    /** A page of my workspaces, oldest first. */
    async list(ownerId: string, request: PageRequest): Promise<Page<Workspace>> {
      const paging = pager(cursors, ownerId, "workspaces");
      const { limit, after } = paging.start(request);
      const page = paging.page(await repo.listPage(store.db, ownerId, seqAfter(after), limit + 1), limit, (row) =>
        String(row.seq),
      );
      return { ...page, items: page.items.map(toWorkspace) };
    },

    async create(ownerId: string, name: string): Promise<Workspace> {
      if (!name.trim()) throw badRequest("name: must not be blank");
      const now = new Date().toISOString();
      const row = { ownerId, id: newId("ws"), name, createdAt: now, updatedAt: now };
      await repo.insert(store.db, row);
      return toWorkspace(row);
    },

    async rename(ownerId: string, workspaceId: string, name: string): Promise<Workspace> {
      if (!name.trim()) throw badRequest("name: must not be blank");
      const row = await repo.rename(store.db, ownerId, workspaceId, name, new Date().toISOString());
      if (!row) throw notFound(`workspace '${workspaceId}' not found`);
      return toWorkspace(row);
    },

    async get(ownerId: string, workspaceId: string): Promise<Workspace> {
      return toWorkspace(await requireOwned(ownerId, workspaceId));
    },

    requireOwned,
  };
}
export type WorkspaceService = ReturnType<typeof createWorkspaceService>;
