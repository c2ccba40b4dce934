/** One memory in a list: its text (as text), where it belongs, when, and for a search its ranking. */
import type { Memory, ScoredMemory } from "../api-types";
import { h } from "../dom";
import { excerpt, time } from "../format";
import { href } from "../router";

export interface RowOptions {
  selected: boolean;
  workspaceName: (id: string) => string;
  onSelect: (checked: boolean) => void;
  onEdit: () => void;
  onForget: () => void;
}

/**
 * A bar of `value` with its number; the bar is decoration, the number is read. Every
 * score and signal is in [0, 1] and means the same across queries, so each bar is drawn on
 * that one absolute scale: 0.5 is half a bar in any row and any search.
 */
function bar(label: string, value: number, className = ""): HTMLElement {
  const fill = h("span", { class: "bar-fill" });
  // CSSOM, not a style attribute: the CSP forbids inline styles.
  fill.style.width = `${Math.round(Math.max(0, Math.min(1, value)) * 100)}%`;
  return h(
    "span",
    { class: `bar-row ${className}` },
    h("span", { class: "bar-label" }, label),
    h("span", { class: "bar", "aria-hidden": "true" }, fill),
    h("span", { class: "bar-value" }, value.toFixed(3)),
  );
}

function ranking(memory: ScoredMemory): HTMLElement {
  const signals = Object.entries(memory.signals ?? {}).filter(
    (entry): entry is [string, number] => typeof entry[1] === "number",
  );
  return h(
    "div",
    { class: "ranking", "aria-label": "Ranking" },
    bar("score", memory.score, "bar-score"),
    signals.map(([name, score]) => bar(name, score, "bar-signal")),
  );
}

function metadataChips(memory: Memory): HTMLElement[] {
  return Object.entries(memory.metadata)
    .slice(0, 3)
    .map(([key, value]) =>
      h(
        "span",
        { class: "chip chip-meta" },
        `${key}: ${excerpt(typeof value === "string" ? value : JSON.stringify(value), 24)}`,
      ),
    );
}

export function memoryRow(memory: Memory | ScoredMemory, options: RowOptions): HTMLLIElement {
  const label = excerpt(memory.content, 50);
  const checkbox = h("input", {
    type: "checkbox",
    class: "row-check",
    "aria-label": `Select “${label}”`,
    checked: options.selected,
  });
  checkbox.addEventListener("change", () => options.onSelect(checkbox.checked));
  const scored = "score" in memory && typeof memory.score === "number";
  return h(
    "li",
    { class: options.selected ? "memory-row is-selected" : "memory-row", "data-id": memory.id },
    checkbox,
    h(
      "div",
      { class: "memory-main" },
      // The text is the row's main link: it opens the memory's page, as the id does.
      h(
        "p",
        { class: "memory-content" },
        h("a", { href: href("/memories", memory.id), class: "memory-content-link" }, memory.content),
      ),
      h(
        "div",
        { class: "memory-meta" },
        h(
          "a",
          { href: href("/memories", memory.id), class: "mono memory-id", "aria-label": `Open “${label}”` },
          memory.id,
        ),
        memory.workspaceId
          ? h(
              "a",
              { class: "chip", href: href("/workspaces", memory.workspaceId) },
              options.workspaceName(memory.workspaceId),
            )
          : null,
        memory.session_id ? h("span", { class: "chip" }, `session ${memory.session_id}`) : null,
        metadataChips(memory),
        h("span", { class: "memory-time" }, time(memory.createdAt)),
      ),
      scored ? ranking(memory as ScoredMemory) : null,
    ),
    h(
      "div",
      { class: "row-actions" },
      h(
        "button",
        {
          type: "button",
          class: "button button-small button-quiet",
          "aria-label": `Edit “${label}”`,
          onClick: options.onEdit,
        },
        "Edit",
      ),
      h(
        "button",
        {
          type: "button",
          class: "button button-small button-quiet",
          "aria-label": `Forget “${label}”`,
          onClick: options.onForget,
        },
        "Forget",
      ),
    ),
  );
}
