/** The Rename and Delete buttons of an item, on its own page or on its row of a list. */
import { h } from "../dom";

export interface ItemActions {
  /** What the item is ("chat", "document", …): the buttons on its page say it ("Rename chat"). */
  kind: string;
  /** On a row of a list: the item's name, which screen readers hear ("Rename Groceries"); absent on its page. */
  rowOf?: string;
  /** Absent where the item cannot be renamed here (an encrypted note's title is inside its ciphertext). */
  onRename?: () => Promise<void>;
  onDelete: () => Promise<void>;
}

/** The buttons, for a `.row-actions` container. */
export function itemActions({ kind, rowOf, onRename, onDelete }: ItemActions): HTMLButtonElement[] {
  const onRow = rowOf !== undefined;
  const button = (verb: "Rename" | "Delete", onClick: () => Promise<void>) =>
    h(
      "button",
      {
        type: "button",
        class: onRow
          ? "button button-small button-quiet"
          : `button button-small${verb === "Delete" ? " button-danger" : ""}`,
        "aria-label": onRow ? `${verb} ${rowOf}` : null,
        onClick,
      },
      onRow ? verb : `${verb} ${kind}`,
    );
  return [...(onRename ? [button("Rename", onRename)] : []), button("Delete", onDelete)];
}
