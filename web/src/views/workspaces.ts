/** Workspaces: the list, oldest first, and a form to create one. */
import { createWorkspace, listWorkspaces } from "../api";
import type { Workspace } from "../api-types";
import { empty, field, h, loading, replace } from "../dom";
import { time } from "../format";
import { href, navigate, type ViewContext } from "../router";
import { setTitle } from "../shell";
import { toastError } from "../toast";

function row(workspace: Workspace): HTMLLIElement {
  return h("li", { class: "entity-row" },
    h("div", { class: "entity-main" },
      h("a", { href: href("/workspaces", workspace.id), class: "entity-title" }, workspace.name),
      h("span", { class: "mono muted" }, workspace.id),
    ),
    h("span", { class: "entity-meta" }, "created ", time(workspace.createdAt, { dateOnly: true })),
  );
}

export async function workspacesView({ outlet, signal }: ViewContext): Promise<void> {
  setTitle("Workspaces");
  const name = h("input", { type: "text", name: "name", maxlength: 200, autocomplete: "off", required: true, placeholder: "e.g. Research" });
  const nameField = field("New workspace", name);
  const create = h("button", { type: "submit", class: "button button-primary" }, "Create");
  const form = h("form", { class: "inline-form" }, nameField.element, create);
  const list = h("ul", { class: "entity-list", "aria-label": "Workspaces" });
  const more = h("button", { type: "button", class: "button load-more", hidden: true }, "Load more");
  const body = h("div", null, loading("Loading workspaces"));
  outlet.append(h("div", { class: "page-header" }, h("h1", { tabindex: -1 }, "Workspaces")), form, body);

  let cursor: string | null = null;
  const items: Workspace[] = [];
  async function load(): Promise<void> {
    try {
      const page = await listWorkspaces(cursor ?? undefined, signal);
      items.push(...page.items);
      cursor = page.nextCursor;
      replace(list, items.map(row));
      more.hidden = !cursor;
      replace(body, items.length ? [list, more] : empty("No workspaces yet.", h("p", { class: "muted" }, "A workspace holds documents, notes, chats and files. Create one above.")));
    } catch (error) {
      if (!signal.aborted) replace(body, h("div", { class: "notice notice-error", role: "alert" }, (error as Error).message));
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
