/**
 * Forgetting memories, with undo while the page is open: each forget keeps what it
 * deleted in memory, and undo re-creates it (same id, content, metadata, workspace,
 * session and time). Views hear about both through `memoryEvents`.
 */
import { deleteMemory, restoreMemory } from "../api";
import type { Memory } from "../api-types";
import { plural } from "../format";
import { toast, toastError } from "../toast";

export interface MemoryChange {
  removed?: string[];
  restored?: Memory[];
  updated?: Memory;
  added?: Memory;
}

/** Fires "change" events with a MemoryChange in `detail`. */
export const memoryEvents = new EventTarget();
export const announce = (change: MemoryChange) =>
  memoryEvents.dispatchEvent(new CustomEvent<MemoryChange>("change", { detail: change }));

const batches: Memory[][] = [];
const toasts = new Map<Memory[], () => void>();

/** Deletes the memories; the ones that went can be brought back with undo. */
export async function forgetMemories(memories: Memory[]): Promise<Memory[]> {
  const results = await Promise.allSettled(memories.map((memory) => deleteMemory(memory.id)));
  const forgotten = memories.filter((_, i) => results[i].status === "fulfilled");
  const failed = results.find((result): result is PromiseRejectedResult => result.status === "rejected");
  if (forgotten.length) {
    batches.push(forgotten);
    announce({ removed: forgotten.map((memory) => memory.id) });
    const batch = forgotten;
    toasts.set(
      batch,
      toast(`Forgot ${plural(forgotten.length, "memory", "memories")}.`, {
        action: { label: "Undo", run: () => undoForget(batch) },
      }),
    );
  }
  if (failed) toastError(failed.reason);
  return forgotten;
}

async function undoForget(batch: Memory[]): Promise<void> {
  const at = batches.indexOf(batch);
  if (at === -1) return;
  batches.splice(at, 1);
  toasts.get(batch)?.();
  toasts.delete(batch);
  const results = await Promise.allSettled(batch.map((memory) => restoreMemory(memory)));
  const restored = results.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
  const failed = batch.filter((_, i) => results[i].status === "rejected");
  if (restored.length) announce({ restored });
  if (failed.length) {
    batches.push(failed);
    toastError(
      `${plural(failed.length, "memory", "memories")} could not be restored: ${(results.find((r) => r.status === "rejected") as PromiseRejectedResult).reason.message}`,
    );
    throw new Error("restore failed");
  }
  toast(`Restored ${plural(restored.length, "memory", "memories")}.`, { tone: "success" });
}

/** Undoes the most recent forget still held (the `u` shortcut). */
export async function undoLastForget(): Promise<void> {
  const batch = batches[batches.length - 1];
  if (!batch) return void toast("Nothing to undo.");
  await undoForget(batch).catch(() => {});
}

/** Drops every undo (the session ended): what one user forgot is never restored into another's account. */
export function clearUndo(): void {
  for (const close of toasts.values()) close();
  toasts.clear();
  batches.length = 0;
}
