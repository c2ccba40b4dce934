/** Workspaces: the list, oldest first, a form to create one, and each one's rename and delete. */
import { createWorkspace, deleteWorkspace, listWorkspaces, renameWorkspace, workspaceContents } from "../api";
import type { Workspace, WorkspaceContents } from "../api-types";
import { confirmDialog, promptDialog } from "../dialog";
import { empty, field, h, loading, replace } from "../dom";
import { plural, time } from "../format";
import { href, navigate, type ViewContext } from "../router";
import { setTitle } from "../shell";
import { toast, toastError } from "../toast";
import { itemActions } from "./item-actions";

/** What a workspace delete removes, in words: "3 documents, 5 chats (40 messages), 4 files and 12 memories". */
export function describeContents(c: Omit<WorkspaceContents, "workspaceId">): string {
  const parts = [
    plural(c.documents, "document"),
    `${plural(c.threads, "chat")}${c.messages ? ` (${plural(c.messages, "message")})` : ""}`,
    plural(c.files, "file"),
    plural(c.memories, "memory", "memories"),
  ];
  return `${parts.slice(0, -1).join(", ")} and ${parts[parts.length - 1]}`;
}

/** Asks (saying what goes, counted by the server), then deletes; whether the workspace was deleted. */
export async function confirmDeleteWorkspace(workspace: Workspace): Promise<boolean> {
  try {
    const contents = await workspaceContents(workspace.id);
    const message = `Delete workspace “${workspace.name}”? Its ${describeContents(contents)} are deleted for good.`;
    if (!(await confirmDialog("Delete workspace", message, "Delete workspace", true))) return false;
    const { removed } = await deleteWorkspace(workspace.id);
    toast(`Deleted ${workspace.name}, with ${describeContents(removed)}.`);
    return true;
  } catch (error) {
    toastError(error);
    return false;
  }
}

/** Asks for a new name, then renames; the renamed workspace, or null. */
export async function promptRenameWorkspace(workspace: Workspace): Promise<Workspace | null> {
  const name = await promptDialog("Rename workspace", "Name", workspace.name);
  if (name === null || name === workspace.name) return null;
  try {
    return await renameWorkspace(workspace.id, name);
  } catch (error) {
    toastError(error);
    return null;
  }
}

function row(workspace: Workspace, onChange: (next: Workspace | null) => void): HTMLLIElement {
  return h(
    "li",
    { class: "entity-row" },
    h(
      "div",
      { class: "entity-main" },
      h("a", { href: href("/workspaces", workspace.id), class: "entity-title" }, workspace.name),
      h("span", { class: "mono muted" }, workspace.id),
    ),
    h("span", { class: "entity-meta" }, "created ", time(workspace.createdAt, { dateOnly: true })),
    h(
      "div",
      { class: "row-actions" },
      itemActions({
        kind: "workspace",
        rowOf: workspace.name,
        onRename: async () => {
          const renamed = await promptRenameWorkspace(workspace);
          if (renamed) onChange(renamed);
        },
        onDelete: async () => {
          if (await confirmDeleteWorkspace(workspace)) onChange(null);
        },
      }),
    ),
  );
}

export async function workspacesView({ outlet, signal }: ViewContext): Promise<void> {
  setTitle("Workspaces");
  const name = h("input", {
    type: "text",
    name: "name",
    maxlength: 200,
    autocomplete: "off",
    required: true,
    placeholder: "e.g. Research",
  });
  const nameField = field("New workspace", name);
  const create = h("button", { type: "submit", class: "button button-primary" }, "Create");
  const form = h("form", { class: "inline-form" }, nameField.element, create);
  const list = h("ul", { class: "entity-list", "aria-label": "Workspaces" });
  const more = h("button", { type: "button", class: "button load-more", hidden: true }, "Load more");
  const body = h("div", null, loading("Loading workspaces"));
  outlet.append(h("div", { class: "page-header" }, h("h1", { tabindex: -1 }, "Workspaces")), form, body);

  let cursor: string | null = null;
  let items: Workspace[] = [];
  function draw(): void {
    const onChange = (at: string) => (next: Workspace | null) => {
      items = next ? items.map((w) => (w.id === at ? next : w)) : items.filter((w) => w.id !== at);
      draw();
    };
    replace(
      list,
      items.map((workspace) => row(workspace, onChange(workspace.id))),
    );
    more.hidden = !cursor;
    replace(
      body,
      items.length
        ? [list, more]
        : empty(
            "No workspaces yet.",
            h("p", { class: "muted" }, "A workspace holds documents, notes, chats and files. Create one above."),
          ),
    );
  }
  async function load(): Promise<void> {
    try {
      const page = await listWorkspaces(cursor ?? undefined, signal);
      items.push(...page.items);
      cursor = page.nextCursor;
      draw();
    } catch (error) {
      if (!signal.aborted)
        replace(body, h("div", { class: "notice notice-error", role: "alert" }, (error as Error).message));
    }
  }
  more.addEventListener("click", () => void load());
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const value = name.value.trim();
    nameField.setError(value ? null : "Give the workspace a name.");
    if (!value) return name.focus();
    create.disabled = true;
    try {
      const workspace = await createWorkspace(value);
      await navigate(`/workspaces/${encodeURIComponent(workspace.id)}`);
    } catch (error) {
      create.disabled = false;
      toastError(error);
    }
  });
  await load();
}
