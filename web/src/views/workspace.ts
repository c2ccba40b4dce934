/** One workspace: a tab for each kind of thing it holds (documents, notes, chats, files, graph). */
import { ApiError, getWorkspace } from "../api";
import type { Workspace } from "../api-types";
import { empty, h, loading, replace } from "../dom";
import { href, navigate, type ViewContext } from "../router";
import { setTitle } from "../shell";
import { chatsTab } from "./chats";
import { documentsTab } from "./documents";
import { filesTab } from "./files";
import { graphTab } from "./graph";
import { notesTab } from "./notes";
import type { TabContext } from "./tab-context";
import { confirmDeleteWorkspace, promptRenameWorkspace } from "./workspaces";
import { itemActions } from "./item-actions";

const TABS: Array<[string, string, (context: TabContext) => Promise<void>]> = [
  ["documents", "Documents", documentsTab],
  ["notes", "Notes", notesTab],
  ["chats", "Chats", chatsTab],
  ["files", "Files", filesTab],
  ["graph", "Graph", graphTab],
];

export async function workspaceView({ outlet, params, signal }: ViewContext): Promise<void> {
  const tab = TABS.find(([name]) => name === (params.tab ?? "documents"));
  const heading = h("h1", { tabindex: -1 }, "Workspace");
  const actions = h("div", { class: "row-actions", hidden: true });
  const container = h("div", { class: "tab-panel" }, loading());
  outlet.append(
    h(
      "nav",
      { class: "breadcrumbs", "aria-label": "Breadcrumbs" },
      h("a", { href: href("/workspaces") }, "Workspaces"),
    ),
    h("div", { class: "page-header" }, heading, actions),
    h(
      "nav",
      { class: "tabs", "aria-label": "Workspace sections" },
      TABS.map(([name, label]) =>
        h(
          "a",
          {
            href: href("/workspaces", params.workspaceId, name),
            class: "tab",
            "aria-current": tab?.[0] === name ? "page" : null,
          },
          label,
        ),
      ),
    ),
    container,
  );
  let workspace: Workspace;
  try {
    workspace = await getWorkspace(params.workspaceId, signal);
  } catch (error) {
    if (signal.aborted) return;
    setTitle("Workspace not found");
    heading.textContent = "Workspace not found";
    replace(
      container,
      error instanceof ApiError && error.notFound
        ? empty("No workspace of yours has this id.", h("a", { href: href("/workspaces") }, "See your workspaces"))
        : h("div", { class: "notice notice-error", role: "alert" }, (error as Error).message),
    );
    return;
  }
  heading.textContent = workspace.name;
  setTitle(tab?.[1] ?? "Not found", workspace.name);
  replace(
    actions,
    itemActions({
      kind: "workspace",
      onRename: async () => {
        const renamed = await promptRenameWorkspace(workspace);
        if (!renamed) return;
        workspace = renamed;
        heading.textContent = renamed.name;
        setTitle(tab?.[1] ?? "Not found", renamed.name);
      },
      onDelete: async () => {
        if (await confirmDeleteWorkspace(workspace)) await navigate("/workspaces");
      },
    }),
  );
  actions.hidden = false;
  if (!tab) return replace(container, empty("This workspace has no such section."));
  await tab[2]({ workspace, itemId: params.itemId, container, signal });
}
