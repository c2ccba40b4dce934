/** A workspace's documents: the list (by notebook), one document rendered from its Markdown, a form to write one, rename and delete. */
import { ApiError } from "../api";
import { createDocument, getDocument, getNotebooks, listDocuments, renameDocument } from "../api-documents";
import type { DocumentSummary } from "../api-types";
import { openDialog, promptDialog } from "../dialog";
import { empty, field, h, loading, replace } from "../dom";
import { time } from "../format";
import { renderMarkdown } from "../markdown";
import { href, navigate } from "../router";
import { setTitle } from "../shell";
import { toastError } from "../toast";
import { confirmDeleteDocument } from "./document-delete";
import { decryptErrorsNotice, isEncrypted, lockedNotice } from "./encrypted";
import { notebooksOf } from "./notes";
import type { TabContext } from "./tab-context";
import { itemActions } from "./item-actions";

/** Titles compare as the server's slugs do: case, accents and punctuation aside. */
const titleKey = (title: string) =>
  title
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");

const errorNotice = (error: unknown) =>
  h("div", { class: "notice notice-error", role: "alert" }, (error as Error).message);

/** Asks for a new title, then renames; the new title, or null. */
async function promptRename(workspaceId: string, document: { id: string; title: string }): Promise<string | null> {
  const title = await promptDialog("Rename document", "Title", document.title, { maxLength: 500 });
  if (title === null || title === document.title) return null;
  try {
    return (await renameDocument(workspaceId, document.id, title)).document.title;
  } catch (error) {
    toastError(error);
    return null;
  }
}

async function documentPage({ workspace, itemId, container, signal }: TabContext): Promise<void> {
  replace(container, loading("Loading the document"));
  try {
    const [{ document, markdown, decryptErrors }, titles] = await Promise.all([
      getDocument(workspace.id, itemId!, signal),
      // [[Title]] links resolve against this workspace's documents (the first 200).
      listDocuments(workspace.id, {}, signal).then(
        (page) => page.documents,
        () => [],
      ),
    ]);
    const byTitle = new Map(titles.map((d) => [titleKey(d.title), d.id]));
    const wikiLink = (title: string) => {
      const id = byTitle.get(titleKey(title));
      return id ? href("/workspaces", workspace.id, "documents", id) : null;
    };
    setTitle(document.title, workspace.name);
    const article = h("article", { class: "markdown-body", "aria-labelledby": "document-title" });
    if (isEncrypted(markdown)) article.append(lockedNotice("document"));
    else if (!markdown.trim()) article.append(h("p", { class: "muted" }, "This document is empty."));
    else article.append(renderMarkdown(markdown, { headingOffset: 2, wikiLink }));
    const heading = h("h2", { id: "document-title" }, document.title);
    const current = { id: document.id, title: document.title };
    replace(
      container,
      h(
        "p",
        { class: "back-link" },
        h("a", { href: href("/workspaces", workspace.id, "documents") }, "← All documents"),
      ),
      h(
        "div",
        { class: "document" },
        h(
          "header",
          { class: "document-header" },
          heading,
          h("p", { class: "muted" }, `${kindLabel(document.document_type)} · updated `, time(document.updated_at)),
          h(
            "div",
            { class: "row-actions" },
            itemActions({
              kind: "document",
              onRename: async () => {
                const title = await promptRename(workspace.id, current);
                if (title) {
                  current.title = title;
                  heading.textContent = title;
                  setTitle(title, workspace.name);
                }
              },
              onDelete: async () => {
                if (await confirmDeleteDocument(workspace.id, current))
                  await navigate(`/workspaces/${encodeURIComponent(workspace.id)}/documents`);
              },
            }),
          ),
        ),
        decryptErrorsNotice(decryptErrors),
        article,
      ),
    );
  } catch (error) {
    if (signal.aborted) return;
    replace(
      container,
      error instanceof ApiError && error.notFound
        ? empty("This document does not exist in this workspace.")
        : errorNotice(error),
    );
  }
}

/**
 * What kind of document this is, in words. The API stores `note`, the contract's default
 * type, for every document created without a `document_type` (the New document form sends
 * none), so `note` here is a plain document; other types are shown as given.
 */
const kindLabel = (type: string) => (type === "note" ? "document" : type);

function openNewDocument(workspaceId: string): void {
  const title = h("input", { type: "text", name: "title", maxlength: 500, required: true });
  const markdown = h("textarea", {
    name: "markdown",
    rows: 12,
    class: "mono",
    placeholder: "# Heading\n\nWrite in Markdown. [[Other page]] links documents.",
  });
  const titleField = field("Title", title);
  const formError = h("div", { class: "notice notice-error", role: "alert", hidden: true });
  const save = h("button", { type: "submit", class: "button button-primary" }, "Create document");
  const form = h(
    "form",
    { class: "form", novalidate: true },
    titleField.element,
    field("Markdown", markdown).element,
    formError,
    h("div", { class: "dialog-actions" }, save),
  );
  const dialog = openDialog("New document", form, { wide: true });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    titleField.setError(title.value.trim() ? null : "Give the document a title.");
    if (!title.value.trim()) return title.focus();
    save.disabled = true;
    try {
      const { document } = await createDocument(workspaceId, { title: title.value.trim(), markdown: markdown.value });
      dialog.close();
      await navigate(`/workspaces/${encodeURIComponent(workspaceId)}/documents/${encodeURIComponent(document.id)}`);
    } catch (error) {
      save.disabled = false;
      formError.textContent = (error as Error).message;
      formError.hidden = false;
    }
  });
}

function documentRow(
  workspaceId: string,
  document: DocumentSummary,
  notebookName: (id: string) => string,
  onChange: (next: DocumentSummary | null) => void,
): HTMLLIElement {
  return h(
    "li",
    { class: "entity-row" },
    h(
      "div",
      { class: "entity-main" },
      h(
        "a",
        { href: href("/workspaces", workspaceId, "documents", document.id), class: "entity-title" },
        document.title,
      ),
      document.notebookId ? h("span", { class: "chip" }, notebookName(document.notebookId)) : null,
    ),
    h("span", { class: "entity-meta" }, "updated ", time(document.updatedAt)),
    h(
      "div",
      { class: "row-actions" },
      itemActions({
        kind: "document",
        rowOf: document.title,
        onRename: async () => {
          const title = await promptRename(workspaceId, document);
          if (title) onChange({ ...document, title });
        },
        onDelete: async () => {
          if (await confirmDeleteDocument(workspaceId, document)) onChange(null);
        },
      }),
    ),
  );
}

export async function documentsTab(context: TabContext): Promise<void> {
  if (context.itemId) return documentPage(context);
  const { workspace, container, signal } = context;
  const list = h("ul", { class: "entity-list", "aria-label": "Documents" });
  const notebookFilter = h("select", { name: "notebook" }, h("option", { value: "" }, "All notebooks"));
  const more = h("button", { type: "button", class: "button load-more", hidden: true }, "Load more");
  const newButton = h(
    "button",
    { type: "button", class: "button button-primary", onClick: () => openNewDocument(workspace.id) },
    "New document",
  );
  const body = h("div", null, loading("Loading documents"));
  replace(container, h("div", { class: "tab-toolbar" }, field("Notebook", notebookFilter).element, newButton), body);

  const notebooks = await getNotebooks(workspace.id, signal).then(notebooksOf, () => []);
  for (const notebook of notebooks) notebookFilter.append(h("option", { value: notebook.id }, notebook.name));
  const notebookName = (id: string) => notebooks.find((n) => n.id === id)?.name ?? id;

  let cursor: string | null = null;
  let items: DocumentSummary[] = [];
  function draw(): void {
    const onChange = (at: string) => (next: DocumentSummary | null) => {
      items = next ? items.map((d) => (d.id === at ? next : d)) : items.filter((d) => d.id !== at);
      draw();
    };
    replace(
      list,
      items.map((document) => documentRow(workspace.id, document, notebookName, onChange(document.id))),
    );
    more.hidden = !cursor;
    replace(
      body,
      items.length
        ? [list, more]
        : empty(notebookFilter.value ? "No documents in this notebook." : "No documents yet."),
    );
  }
  async function load(reset: boolean): Promise<void> {
    if (reset) {
      items = [];
      cursor = null;
    }
    try {
      const page = await listDocuments(
        workspace.id,
        { cursor: cursor ?? undefined, notebookId: notebookFilter.value || undefined },
        signal,
      );
      items.push(...page.documents);
      cursor = page.hasMore ? page.nextCursor : null;
      draw();
    } catch (error) {
      if (!signal.aborted) replace(body, errorNotice(error));
    }
  }
  notebookFilter.addEventListener("change", () => void load(true));
  more.addEventListener("click", () => void load(false));
  await load(true);
}
