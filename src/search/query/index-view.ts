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
  /** Whether every row of a full-text table is in its index, so a search may skip the flat scan of unindexed rows. */
  fullyIndexed(table: string): boolean;
  /** Whether a full-text table holds conversation context (its context columns are matched then). */
  hasContext(table: string): Promise<boolean>;
  /** Tells the writer that a full-text table was searched: it weighs compacting the table against its searches' cost. */
  noteSearch(table: string): void;
}
