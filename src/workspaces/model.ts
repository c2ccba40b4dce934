import { t } from "elysia";

export const Workspace = t.Object({
  id: t.String({ description: "ws_ + a sortable id" }),
  name: t.String(),
  createdAt: t.String({ format: "date-time" }),
  updatedAt: t.String({ format: "date-time" }),
});
export type Workspace = typeof Workspace.static;

export const CreateWorkspaceBody = t.Object({
  name: t.String({ minLength: 1, maxLength: 200, description: "1–200 characters, not blank" }),
});

export const WorkspaceEnvelope = t.Object({ workspace: Workspace });
