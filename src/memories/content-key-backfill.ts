import type { Store } from "../db/store";
import type { Logger } from "../lib/log";
import type { MemoryRepository } from "./repository";

/** Keys the memories stored before the exact-duplicate rule; a failure (another replica at it) is retried at the next start. */
export async function backfillContentKeys(store: Store, repo: MemoryRepository, log: Logger) {
  const PAGE = 500;
  try {
    // A plain read first: a start with nothing to fill takes no write lock.
    if (!(await repo.anyUnkeyed(store.db))) return;
    while ((await store.transaction((tx) => repo.backfillContentKeys(tx, PAGE))) === PAGE);
  } catch (error) {
    log.warn("memory duplicate keys not filled in; retried at the next start", { reason: (error as Error).message });
  }
}
