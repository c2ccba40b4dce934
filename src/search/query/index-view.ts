import type { WrittenSinceIndexed } from "../indexing/compaction-policy";
import type { PartitionGroup } from "../lance/partitions";

/**
 * What a search needs from the indexing side, and nothing more: the read path's one view
 * onto the index writer. In the process that writes the index it answers from the
 * writer's own state; in any other (a replica, the CLI) it follows the writer through
 * the store of record.
 */
export interface IndexView {
  /** In a process that does not write the index: moves its view to the writer's newest version when it wrote since. */
  followWriter(): Promise<void>;
  /** The owner's vector table of a group in the current vector space, once vectors exist (null: full text only). */
  vectorTable(ownerId: string, group: PartitionGroup): string | null;
  /**
   * The sources written into a full-text table since its index last covered every row (the
   * index writer knows them: it writes them), or null when this process cannot know them
   * all. A search that holds those sources among its pending items skips the table's flat
   * scan of unindexed rows (pending-index.ts). The writer adds a source to the list
   * before its rows leave the outbox, so a search finds every change in one or the other.
   */
  writtenSinceIndexed(table: string): Readonly<WrittenSinceIndexed> | null;
  /** Whether a full-text table holds conversation context (its context columns are matched then). */
  hasContext(table: string): Promise<boolean>;
  /**
   * Tells the writer that a full-text table was searched (`held`: the search held the
   * table's unindexed rows among its pending items and did not scan them): it weighs
   * compacting the table against what its unindexed rows cost searches.
   */
  noteSearch(table: string, held: boolean): void;
}
