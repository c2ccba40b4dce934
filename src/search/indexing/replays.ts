import { sourceKey, type SearchKind, type SourceRef } from "../types";
import type { OutboxRow, OutboxStage } from "./outbox-repository";

type PerStage = Record<OutboxStage, number>;

/**
 * Which rows of a batch may have reached LanceDB already, so that their sources are deleted
 * before they are added and a replay replaces rather than duplicates: rows at or below the
 * highest seq of each stage when this process became the writer (a crash, or another
 * replica losing the lease, may have left them half done), and the rows of a batch that
 * failed (the writer's child may have ended after a commit, before it answered).
 */
export class Replays {
  private upTo: PerStage = { text: Number.MAX_SAFE_INTEGER, vector: Number.MAX_SAFE_INTEGER };
  /** The highest seq of the batch of each stage taken and not yet finished. */
  private unfinished: PerStage = { text: 0, vector: 0 };

  /** This process became the writer: `maxSeqs` the outbox's highest seqs then. */
  tookOver(maxSeqs: PerStage): void {
    this.upTo = { ...maxSeqs };
    this.unfinished = { text: 0, vector: 0 };
  }

  /** The index was emptied: nothing enqueued from now on needs a delete. */
  emptied(): void {
    this.upTo = { text: 0, vector: 0 };
    this.unfinished = { text: 0, vector: 0 };
  }

  /** A batch's sources, each once, and those to delete before adding (changed, deleted, or maybe replayed). */
  plan(rows: OutboxRow[], stage: OutboxStage): { refs: SourceRef[]; deletes: SourceRef[] } {
    // The last batch of this stage did not finish: whatever of it comes again is a replay.
    this.upTo[stage] = Math.max(this.upTo[stage], this.unfinished[stage]);
    const bySource = new Map<string, { ref: SourceRef; needsDelete: boolean }>();
    let highest = 0;
    for (const row of rows) {
      const ref = { ownerId: row.ownerId, kind: row.kind as SearchKind, sourceId: row.sourceId };
      const key = sourceKey(ref);
      const needsDelete = row.op !== "insert" || row.seq <= this.upTo[stage] || bySource.has(key);
      bySource.set(key, { ref, needsDelete: needsDelete || (bySource.get(key)?.needsDelete ?? false) });
      if (row.seq > highest) highest = row.seq;
    }
    this.unfinished[stage] = highest;
    const refs = [...bySource.values()].map((v) => v.ref);
    const deletes = [...bySource.values()].filter((v) => v.needsDelete).map((v) => v.ref);
    return { refs, deletes };
  }

  /** The batch of this stage is written and off the outbox. */
  finished(stage: OutboxStage): void {
    this.unfinished[stage] = 0;
  }
}
