/**
 * Toasts: short messages in a polite live region (screen readers hear them). A toast with
 * an action (Undo) stays until used or closed; others leave after a few seconds.
 */
import { h } from "./dom";

const MAX_TOASTS = 4;
const PLAIN_TOAST_MS = 6000;
let region: HTMLElement | null = null;

/** The live region; the shell puts it in the page once. */
export function toastRegion(): HTMLElement {
  region ??= h("div", { class: "toasts", role: "status", "aria-live": "polite", "aria-relevant": "additions" });
  return region;
}

export interface ToastOptions {
  tone?: "info" | "error" | "success";
  action?: { label: string; run: () => void | Promise<void> };
}

/** Shows a message; returns a function that removes it. */
export function toast(message: string, options: ToastOptions = {}): () => void {
  const container = toastRegion();
  const item = h("div", { class: `toast toast-${options.tone ?? "info"}` });
  const close = () => item.remove();
  item.append(h("p", null, message));
  if (options.action) {
    const { label, run } = options.action;
    const button = h(
      "button",
      {
        type: "button",
        class: "button button-small",
        onClick: async () => {
          button.disabled = true;
          try {
            await run();
            close();
          } catch {
            button.disabled = false;
          }
        },
      },
      label,
    );
    item.append(button);
  }
  item.append(
    h("button", { type: "button", class: "icon-button toast-close", "aria-label": "Dismiss", onClick: close }, "×"),
  );
  container.append(item);
  while (container.children.length > MAX_TOASTS) container.firstElementChild?.remove();
  if (!options.action) setTimeout(close, options.tone === "error" ? PLAIN_TOAST_MS * 2 : PLAIN_TOAST_MS);
  return close;
}

/** An error's message as a toast. */
export const toastError = (error: unknown) =>
  toast(error instanceof Error ? error.message : String(error), { tone: "error" });
