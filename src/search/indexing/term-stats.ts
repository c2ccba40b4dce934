import type { Executor } from "../../db/store";
import type { Logger } from "../../lib/log";
import { itemTerms } from "../analysis/item-terms";
import { readWordVectors } from "../analysis/word-vectors";
import { loadSourceItems, type SearchSources, type SourceRef } from "../types";
import { createTermStatsRepository } from "./term-stats-repository";

export { itemKey, type OwnStatistics, type PendingRow } from "./term-stats-repository";

/**
 * Each owner's full-text statistics and forward rows (term-stats-repository.ts), and the
 * analysis that keeps them: a write analyses what it changed once, in its own transaction
 * (`refresh`, called by the outbox as the change is recorded).
 */
export function createTermStats(o: { sources: SearchSources; log: Logger }) {
  const repository = createTermStatsRepository();
  return {
    ...repository,
    /**
     * Analyses these sources' current items (none: deleted) and makes the statistics count
     * them instead of what they counted before, inside the write's transaction `tx`. The
     * owner's statistics rows are locked first (`lockOwners`), so the items are read, and
     * the old forward rows replaced, in commit order.
     */
    async refresh(tx: Executor, refs: SourceRef[]): Promise<void> {
      if (!refs.length) return;
      await repository.lockOwners(tx, refs);
      const items = await loadSourceItems(tx, o.sources, refs, { context: true });
      const vectors = await readWordVectors(o.log);
      await repository.replace(
        tx,
        refs,
        items.map((item) => ({ item, terms: itemTerms(item, vectors) })),
      );
    },
  };
}

export type TermStats = ReturnType<typeof createTermStats>;
