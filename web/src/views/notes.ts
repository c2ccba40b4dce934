/** A workspace's notes (the legacy note API) and notebooks; encrypted ones open with a client key; rename and delete. */
import { ApiError } from "../api";
import { getNote, getNotebooks, listDocuments, listNotes, patchNote } from "../api-documents";
import type { Json, JsonObject, NoteEntry } from "../api-types";
import { promptDialog } from "../dialog";
import { empty, h, loading, replace } from "../dom";
import { plural, time } from "../format";
import { renderMarkdown } from "../markdown";
import { href, navigate } from "../router";
import { setTitle } from "../shell";
import { toastError } from "../toast";
import { confirmDeleteDocument } from "./document-delete";
import { decryptErrorsNotice, isEncrypted, lockedNotice } from "./encrypted";
import type { TabContext } from "./tab-context";
import { itemActions } from "./item-actions";

export interface Notebook {
  id: string;
  name: string;
}

/** The notebooks of a plaintext (or decrypted) registry: `[{id, name|title}]` or `{notebooks: […]}`. */
export function notebooksOf(registry: { ciphertext: string | null }): Notebook[] {
  if (!registry.ciphertext || isEncrypted(registry.ciphertext)) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(registry.ciphertext);
  } catch {
    return [];
  }
  const list = Array.isArray(parsed) ? parsed : (parsed as { notebooks?: unknown })?.notebooks;
  if (!Array.isArray(list)) return [];
  return list.flatMap((item) => {
    if (typeof item !== "object" || item === null || typeof item.id !== "string") return [];
    const name = [item.name, item.title].find((value) => typeof value === "string" && value.trim());
    return [{ id: item.id, name: name ?? item.id }];
  });
}

function titleOf(note: NoteEntry): string | null {
  const document = note.document as { title?: Json } | undefined;
  return typeof document?.title === "string" && document.title.trim() ? document.title : null;
}

/** A plaintext note's payload: a rename rewrites its title (the server takes the document's title from it). */
const plainPayload = (document: Json | undefined): JsonObject | null =>
  typeof document === "object" && document !== null && !Array.isArray(document) && !isEncrypted(document)
    ? document
    : null;

/** Asks for a new title, then renames; the new title, or null. */
async function promptRename(
  workspaceId: string,
  noteId: string,
  payload: JsonObject,
  current: string,
): Promise<string | null> {
  const title = await promptDialog("Rename note", "Title", current, { maxLength: 500 });
  if (title === null || title === current) return null;
  try {
    await patchNote(workspaceId, noteId, { ...payload, title });
    return title;
  } catch (error) {
    toastError(error);
    return null;
  }
}

async function notePage({ workspace, itemId, container, signal }: TabContext): Promise<void> {
  replace(container, loading("Loading the note"));
  try {
    const note = await getNote(workspace.id, itemId!, signal);
    // The API types a payload as any JSON value: what the helpers below take.
    const document = note.document as Json;
    const payload = document as { title?: Json } | string;
    const title = typeof payload === "object" && payload && typeof payload.title === "string" ? payload.title : itemId!;
    setTitle(title, workspace.name);
    const article = h("article", { class: "markdown-body", "aria-labelledby": "note-title" });
    if (isEncrypted(note.markdown) || isEncrypted(document)) article.append(lockedNotice("note"));
    else if (!note.markdown.trim()) article.append(h("p", { class: "muted" }, "This note has no Markdown."));
    else article.append(renderMarkdown(note.markdown, { headingOffset: 2 }));
    const heading = h("h2", { id: "note-title" }, title);
    const plain = plainPayload(document);
    let current = title;
    const actions = h(
      "div",
      { class: "row-actions" },
      itemActions({
        kind: "note",
        onRename: plain
          ? async () => {
              const renamed = await promptRename(workspace.id, itemId!, plain, current);
              if (renamed) {
                current = renamed;
                heading.textContent = renamed;
                setTitle(renamed, workspace.name);
              }
            }
          : undefined,
        onDelete: async () => {
          if (await confirmDeleteDocument(workspace.id, { id: itemId!, title: current }, "note"))
            await navigate(`/workspaces/${encodeURIComponent(workspace.id)}/notes`);
        },
      }),
    );
    replace(
      container,
      h("p", { class: "back-link" }, h("a", { href: href("/workspaces", workspace.id, "notes") }, "← All notes")),
      h(
        "div",
        { class: "document" },
        h("header", { class: "document-header" }, heading, actions),
        decryptErrorsNotice(note.decryptErrors),
        article,
      ),
    );
  } catch (error) {
    if (signal.aborted) return;
    replace(
      container,
      error instanceof ApiError && error.notFound
        ? empty("This note does not exist in this workspace.")
        : h("div", { class: "notice notice-error", role: "alert" }, (error as Error).message),
    );
  }
}

export async function notesTab(context: TabContext): Promise<void> {
  if (context.itemId) return notePage(context);
  const { workspace, container, signal } = context;
  replace(container, loading("Loading notes"));
  try {
    const [registry, notes, documents] = await Promise.all([
      getNotebooks(workspace.id, signal).catch(() => ({ ciphertext: null })),
      loadAllNotes(workspace.id, signal),
      // Notes written through the documents API carry their title there, not in the note payload.
      listDocuments(workspace.id, {}, signal).then(
        (page) => page.documents,
        () => [],
      ),
    ]);
    const documentTitles = new Map(documents.map((d) => [d.id, d.title]));
    const notebooks = notebooksOf(registry);
    const name = (id: string) => notebooks.find((n) => n.id === id)?.name ?? id;
    const sections: HTMLElement[] = [];
    if (registry.ciphertext && isEncrypted(registry.ciphertext)) sections.push(lockedNotice("notebook list"));
    if (notebooks.length) {
      sections.push(
        h(
          "section",
          { class: "panel", "aria-labelledby": "notebooks-heading" },
          h("h2", { id: "notebooks-heading" }, "Notebooks"),
          h(
            "ul",
            { class: "chip-list" },
            notebooks.map((notebook) => {
              const count = notes.filter((note) => note._meta.notebookId === notebook.id).length;
              return h("li", { class: "chip" }, `${notebook.name} · ${plural(count, "note")}`);
            }),
          ),
        ),
      );
    }
    const list = h("ul", { class: "entity-list", "aria-label": "Notes" });
    const titles = new Map(notes.map((note) => [note.id, titleOf(note) ?? documentTitles.get(note.id) ?? null]));
    const draw = (): void => {
      if (!notes.length) return void list.replaceWith(empty("No notes in this workspace."));
      replace(
        list,
        notes.map((note) => {
          const title = titles.get(note.id) ?? null;
          const shown =
            title ??
            (isEncrypted(note.ciphertext ?? undefined) || note.format === "svc.om.encrypted"
              ? "Encrypted note"
              : note.id);
          const notebookId = typeof note._meta.notebookId === "string" ? note._meta.notebookId : null;
          const updated = typeof note._meta.updatedAt === "string" ? note._meta.updatedAt : null;
          const payload = plainPayload(note.document as Json | undefined);
          return h(
            "li",
            { class: "entity-row" },
            h(
              "div",
              { class: "entity-main" },
              h("a", { href: href("/workspaces", workspace.id, "notes", note.id), class: "entity-title" }, shown),
              notebookId ? h("span", { class: "chip" }, name(notebookId)) : null,
              note.format === "svc.om.encrypted" && !title ? h("span", { class: "chip chip-lock" }, "encrypted") : null,
            ),
            h("span", { class: "entity-meta" }, updated ? ["updated ", time(updated)] : note.format),
            h(
              "div",
              { class: "row-actions" },
              itemActions({
                kind: "note",
                rowOf: shown,
                // An encrypted note's title is inside its ciphertext: only the client that holds the key renames it.
                onRename: payload
                  ? async () => {
                      const renamed = await promptRename(workspace.id, note.id, payload, title ?? "");
                      if (renamed) {
                        note.document = { ...payload, title: renamed };
                        titles.set(note.id, renamed);
                        draw();
                      }
                    }
                  : undefined,
                onDelete: async () => {
                  if (await confirmDeleteDocument(workspace.id, { id: note.id, title: shown }, "note")) {
                    notes.splice(notes.indexOf(note), 1);
                    draw();
                  }
                },
              }),
            ),
          );
        }),
      );
    };
    sections.push(notes.length ? list : empty("No notes in this workspace."));
    if (notes.length) draw();
    replace(container, ...sections);
  } catch (error) {
    if (!signal.aborted)
      replace(container, h("div", { class: "notice notice-error", role: "alert" }, (error as Error).message));
  }
}

async function loadAllNotes(workspaceId: string, signal: AbortSignal): Promise<NoteEntry[]> {
  const notes: NoteEntry[] = [];
  let cursor: string | undefined;
  // Notes are listed whole (a workspace holds hundreds, not millions); pages are 200.
  for (let pages = 0; pages < 50; pages++) {
    const page = await listNotes(workspaceId, cursor, signal);
    notes.push(...page.items);
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  return notes;
}
