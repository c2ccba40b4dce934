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

export const RenameWorkspaceBody = CreateWorkspaceBody;

const Counts = {
  documents: t.Integer({ description: "documents (notes are documents)" }),
  threads: t.Integer({ description: "chat threads" }),
  messages: t.Integer({ description: "messages of those threads" }),
  files: t.Integer(),
  memories: t.Integer(),
  jobs: t.Integer({ description: "extraction jobs of its conversations or meant for it" }),
};
export const WorkspaceContents = t.Object({ workspaceId: t.String(), ...Counts });
export const DeletedWorkspace = t.Object({
  id: t.String(),
  deleted: t.Literal(true),
  removed: t.Object(Counts, { description: "what went with it" }),
});
