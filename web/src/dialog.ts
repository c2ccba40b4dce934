/**
 * Modal dialogs on the native <dialog> element: focus stays inside, Escape closes, and
 * focus returns to what opened it.
 */
import { field, h, uid, type Child } from "./dom";

export interface DialogHandle {
  element: HTMLDialogElement;
  close(): void;
  closed: Promise<void>;
}

export function openDialog(
  title: string,
  body: Child,
  options: { wide?: boolean; description?: string } = {},
): DialogHandle {
  const opener = document.activeElement as HTMLElement | null;
  const titleId = uid("dialog-title");
  const dialog = h(
    "dialog",
    { class: options.wide ? "dialog dialog-wide" : "dialog", "aria-labelledby": titleId },
    h(
      "header",
      { class: "dialog-header" },
      h("h2", { id: titleId }, title),
      h("button", { type: "button", class: "icon-button", "aria-label": "Close", onClick: () => dialog.close() }, "×"),
    ),
    h(
      "div",
      { class: "dialog-body" },
      options.description ? h("p", { class: "muted" }, options.description) : null,
      body,
    ),
  );
  let resolveClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  dialog.addEventListener("close", () => {
    dialog.remove();
    if (opener?.isConnected) opener.focus();
    resolveClosed();
  });
  document.body.append(dialog);
  dialog.showModal();
  // The first field, else the first button, takes focus.
  const first =
    dialog.querySelector<HTMLElement>("input:not([type=hidden]), textarea, select") ??
    dialog.querySelector<HTMLElement>(".dialog-actions button");
  first?.focus();
  return { element: dialog, close: () => dialog.close(), closed };
}

/** Asks a yes/no question; true when confirmed. */
export function confirmDialog(title: string, message: string, confirmLabel: string, danger = false): Promise<boolean> {
  return new Promise((resolve) => {
    let answer = false;
    const handle = openDialog(title, [
      h("p", null, message),
      h(
        "div",
        { class: "dialog-actions" },
        h("button", { type: "button", class: "button", onClick: () => handle.close() }, "Cancel"),
        h(
          "button",
          {
            type: "button",
            class: danger ? "button button-danger" : "button button-primary",
            onClick: () => {
              answer = true;
              handle.close();
            },
          },
          confirmLabel,
        ),
      ),
    ]);
    void handle.closed.then(() => resolve(answer));
  });
}

/**
 * Asks for a new name (a rename): the value, trimmed, or null when cancelled. A blank value
 * is refused in the form, as the API would refuse it.
 */
export function promptDialog(
  title: string,
  label: string,
  initial: string,
  options: { confirmLabel?: string; maxLength?: number } = {},
): Promise<string | null> {
  return new Promise((resolve) => {
    let answer: string | null = null;
    const input = h("input", {
      type: "text",
      name: "name",
      value: initial,
      maxlength: options.maxLength ?? 200,
      autocomplete: "off",
      required: true,
    });
    const nameField = field(label, input);
    const form = h(
      "form",
      { class: "form", novalidate: true },
      nameField.element,
      h(
        "div",
        { class: "dialog-actions" },
        h("button", { type: "button", class: "button", onClick: () => handle.close() }, "Cancel"),
        h("button", { type: "submit", class: "button button-primary" }, options.confirmLabel ?? "Rename"),
      ),
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const value = input.value.trim();
      nameField.setError(value ? null : "The name must not be blank.");
      if (!value) return input.focus();
      answer = value;
      handle.close();
    });
    const handle = openDialog(title, form);
    input.select();
    void handle.closed.then(() => resolve(answer));
  });
}
