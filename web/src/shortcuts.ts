/**
 * Keyboard shortcuts, active when no field has focus and no dialog is open:
 * `/` search, `n` new memory, `u` undo the last forget, `g m|w|s` go to a page, `?` this list.
 */
import { openDialog } from "./dialog";
import { h } from "./dom";
import { navigate, appPath } from "./router";
import { undoLastForget } from "./views/memory-undo";

export const SHORTCUTS: Array<[string, string]> = [
  ["/", "Search memories"],
  ["n", "New memory"],
  ["u", "Undo the last forget"],
  ["g m", "Go to memories"],
  ["g w", "Go to workspaces"],
  ["g s", "Go to your server"],
  ["?", "Show these shortcuts"],
  ["Esc", "Close a dialog"],
];

function showHelp(): void {
  openDialog(
    "Keyboard shortcuts",
    h(
      "dl",
      { class: "shortcut-list" },
      SHORTCUTS.map(([keys, what]) => [
        h(
          "dt",
          null,
          keys.split(" ").map((key) => h("kbd", null, key)),
        ),
        h("dd", null, what),
      ]),
    ),
  );
}

/** Runs `action` on the memories page, going there first when needed. */
async function onMemories(action: () => void): Promise<void> {
  if (appPath() !== "/memories") await navigate("/memories", { focus: false });
  action();
}

const isTyping = (target: EventTarget | null) =>
  target instanceof HTMLElement &&
  (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));

let pendingG = false;
let installed = false;

export function installShortcuts(): void {
  if (installed) return;
  installed = true;
  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
    // Only inside the signed-in app (its <main class="main">), never over a dialog.
    if (document.querySelector("dialog[open]") || !document.querySelector("main.main")) return;
    const key = event.key;
    if (pendingG) {
      pendingG = false;
      const to = { m: "/memories", w: "/workspaces", s: "/server" }[key];
      if (to) {
        event.preventDefault();
        void navigate(to);
      }
      return;
    }
    if (key === "g") pendingG = true;
    else if (key === "/") {
      event.preventDefault();
      void onMemories(() => document.getElementById("memory-search")?.focus());
    } else if (key === "n") {
      event.preventDefault();
      void onMemories(() => document.getElementById("add-memory")?.click());
    } else if (key === "u") {
      event.preventDefault();
      void undoLastForget();
    } else if (key === "?") {
      event.preventDefault();
      showHelp();
    }
  });
}
