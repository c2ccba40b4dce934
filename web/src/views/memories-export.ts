/** Export: every page of the (filtered) list, downloaded as one JSON file through a Blob URL. */
import { listMemories } from "../api";
import type { Memory, MemoryFilters } from "../api-types";
import { plural } from "../format";
import { toast, toastError } from "../toast";

const PAGE = 1000;

/** Saves `data` as a file named `name` (a Blob URL, revoked once the download started). */
export function saveBlob(data: Blob, name: string): void {
  const url = URL.createObjectURL(data);
  const anchor = document.createElement("a");
  anchor.href = url;
  anchor.download = name;
  anchor.hidden = true;
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

export async function exportMemories(filters: MemoryFilters, button: HTMLButtonElement): Promise<void> {
  const label = button.textContent;
  button.disabled = true;
  try {
    const memories: Memory[] = [];
    let cursor: string | undefined;
    do {
      const page = await listMemories({ limit: PAGE, cursor, ...filters });
      memories.push(...page.data);
      cursor = page.hasMore && page.nextCursor ? page.nextCursor : undefined;
      button.textContent = `Exporting… ${memories.length}`;
    } while (cursor);
    const body = JSON.stringify(
      { exportedAt: new Date().toISOString(), filters, count: memories.length, memories },
      null,
      2,
    );
    saveBlob(
      new Blob([body], { type: "application/json" }),
      `mnemo-memories-${new Date().toISOString().slice(0, 10)}.json`,
    );
    toast(`Exported ${plural(memories.length, "memory", "memories")}.`, { tone: "success" });
  } catch (error) {
    toastError(error);
  } finally {
    button.disabled = false;
    button.textContent = label;
  }
}
