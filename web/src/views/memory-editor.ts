/** The dialog that adds a memory or edits one's content and metadata. */
import { addMemory, updateMemory } from "../api";
import type { JsonObject, Memory, NewMemory, Workspace } from "../api-types";
import { openDialog } from "../dialog";
import { field, h } from "../dom";
import { prettyJson } from "../format";
import { toast } from "../toast";
import { announce } from "./memory-undo";

/** The metadata text as an object, or a message naming what is wrong. */
export function parseMetadata(text: string): { value?: JsonObject; error?: string } {
  if (!text.trim()) return { value: {} };
  try {
    const value = JSON.parse(text);
    if (typeof value !== "object" || value === null || Array.isArray(value))
      return { error: 'Metadata must be a JSON object, like {"topic": "travel"}.' };
    return { value };
  } catch (error) {
    return { error: `Metadata is not valid JSON: ${(error as Error).message}` };
  }
}

function explain(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Opens the editor; `memory` given means edit, else add. Resolves with the saved memory, or null. */
export function openMemoryEditor(options: {
  memory?: Memory;
  workspaces: Workspace[];
  workspaceId?: string;
}): Promise<Memory | null> {
  const editing = options.memory;
  const content = h("textarea", { rows: 6, required: true, name: "content" });
  content.value = editing?.content ?? "";
  const metadata = h("textarea", {
    rows: 4,
    name: "metadata",
    class: "mono",
    spellcheck: "false",
    placeholder: '{"topic": "travel"}',
  });
  metadata.value = editing && Object.keys(editing.metadata).length ? prettyJson(editing.metadata) : "";
  const contentField = field("Content", content);
  const metadataField = field("Metadata", metadata, "Optional. A JSON object.");
  const extra: HTMLElement[] = [];
  let workspace: HTMLSelectElement | null = null;
  let session: HTMLInputElement | null = null;
  let when: HTMLInputElement | null = null;
  if (!editing) {
    workspace = h(
      "select",
      { name: "workspaceId" },
      h("option", { value: "" }, "None"),
      options.workspaces.map((w) => h("option", { value: w.id }, w.name)),
    );
    workspace.value = options.workspaceId ?? "";
    session = h("input", {
      type: "text",
      name: "session_id",
      autocomplete: "off",
      placeholder: "e.g. chat-2024-06-01",
    });
    when = h("input", { type: "datetime-local", name: "timestamp" });
    extra.push(
      h("div", { class: "field-row" }, field("Workspace", workspace).element, field("Session", session).element),
      field("When", when, "Optional: when this happened, if not now.").element,
    );
  }
  const formError = h("div", { class: "notice notice-error", role: "alert", hidden: true });
  const save = h("button", { type: "submit", class: "button button-primary" }, editing ? "Save changes" : "Add memory");
  const cancel = h("button", { type: "button", class: "button" }, "Cancel");
  const form = h(
    "form",
    { class: "form", novalidate: true },
    contentField.element,
    metadataField.element,
    extra,
    formError,
    h("div", { class: "dialog-actions" }, cancel, save),
  );
  const dialog = openDialog(editing ? "Edit memory" : "New memory", form, { wide: true });
  cancel.addEventListener("click", () => dialog.close());
  content.focus();
  let saved: Memory | null = null;

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = content.value.trim();
    const meta = parseMetadata(metadata.value);
    contentField.setError(text ? null : "Write something to remember.");
    metadataField.setError(meta.error ?? null);
    if (!text) return content.focus();
    if (meta.error) return metadata.focus();
    save.disabled = true;
    formError.hidden = true;
    try {
      if (editing) {
        saved = await updateMemory(editing.id, { content: text, metadata: meta.value });
        announce({ updated: saved });
        toast("Memory saved.", { tone: "success" });
      } else {
        const body: NewMemory = { content: text };
        if (meta.value && Object.keys(meta.value).length) body.metadata = meta.value;
        if (workspace?.value) body.workspaceId = workspace.value;
        if (session?.value.trim()) body.session_id = session.value.trim();
        if (when?.value) body.timestamp = new Date(when.value).toISOString();
        const added = await addMemory(body);
        saved = added.memory;
        // An exact duplicate stored nothing: the list already shows that memory.
        if (added.duplicate) toast("Already remembered: nothing new was stored.", { tone: "info" });
        else {
          announce({ added: saved });
          toast("Memory added.", { tone: "success" });
        }
      }
      dialog.close();
    } catch (error) {
      formError.textContent = explain(error);
      formError.hidden = false;
      save.disabled = false;
    }
  });
  return dialog.closed.then(() => saved);
}
