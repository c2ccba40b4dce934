import type { Database } from "bun:sqlite";
import type { SearchKind, SourceRef } from "./types";

/** `insert`: a new source (nothing to replace); `sync`: re-read and replace; `rebuild`: drop and re-enqueue all. */
export type OutboxOp = "insert" | "sync" | "rebuild";
export type OutboxStage = "text" | "vector";

export interface OutboxRow {
  seq: number;
  ownerId: string;
  kind: SearchKind | "*";
  sourceId: string;
  op: OutboxOp;
  stage: OutboxStage;
  attempts: number;
}

type Record_ = { seq: number; owner_id: string; kind: SearchKind | "*"; source_id: string; op: OutboxOp; stage: OutboxStage; attempts: number };
const toRow = (r: Record_): OutboxRow => ({
  seq: r.seq, ownerId: r.owner_id, kind: r.kind, sourceId: r.source_id, op: r.op, stage: r.stage, attempts: r.attempts,
});

/**
 * The outbox: written in the same transaction as the record it describes, so the
 * index can never miss an acknowledged write; drained by the indexer.
 */
export function createOutbox(db: Database) {
  const insert = db.query("INSERT INTO outbox (owner_id, kind, source_id, op, stage, created_at) VALUES (?, ?, ?, ?, ?, ?)");
  const batchOf = db.query<Record_, [OutboxStage, number, number]>(
    "SELECT seq, owner_id, kind, source_id, op, stage, attempts FROM outbox WHERE stage = ? AND available_at <= ? ORDER BY seq LIMIT ?",
  );
  const ownerPending = db.query<{ seq: number }, [string]>(
    "SELECT MAX(seq) AS seq FROM outbox WHERE owner_id = ? AND stage = 'text'",
  );
  const anyPending = db.query<{ seq: number }, []>("SELECT MAX(seq) AS seq FROM outbox WHERE stage = 'text'");
  const textUpTo = db.query<{ one: number }, [number]>("SELECT 1 AS one FROM outbox WHERE stage = 'text' AND seq <= ? LIMIT 1");

  return {
    /** Records that a source changed. Call inside the record's own write transaction. */
    enqueue(ref: SourceRef, op: OutboxOp, stage: OutboxStage = "text"): void {
      insert.run(ref.ownerId, ref.kind, ref.sourceId, op, stage, Date.now());
    },
    /** Asks the indexer (this process's or the server's) to rebuild the whole index. */
    enqueueRebuild(): void {
      insert.run("*", "*", "*", "rebuild", "text", Date.now());
    },
    nextBatch(stage: OutboxStage, limit: number, now = Date.now()): OutboxRow[] {
      return batchOf.all(stage, now, limit).map(toRow);
    },
    /** Highest pending text-stage seq for an owner (or anyone); null when none is pending. */
    pendingTextSeq(ownerId?: string): number | null {
      return (ownerId === undefined ? anyPending.get() : ownerPending.get(ownerId))?.seq ?? null;
    },
    hasTextUpTo: (seq: number) => textUpTo.get(seq) !== null,
    remove(seqs: number[]): void {
      if (!seqs.length) return;
      db.query(`DELETE FROM outbox WHERE seq IN (${seqs.map(() => "?").join(",")})`).run(...seqs);
    },
    advanceToVector(seqs: number[]): void {
      if (!seqs.length) return;
      db.query(`UPDATE outbox SET stage = 'vector', attempts = 0, available_at = 0 WHERE seq IN (${seqs.map(() => "?").join(",")})`).run(...seqs);
    },
    /** Postpones rows after a failure, with exponential backoff capped at five minutes. */
    postpone(rows: OutboxRow[], now = Date.now()): void {
      const update = db.query("UPDATE outbox SET attempts = ?, available_at = ? WHERE seq = ?");
      db.transaction(() => {
        for (const row of rows) {
          const attempts = row.attempts + 1;
          update.run(attempts, now + Math.min(300_000, 1_000 * 2 ** Math.min(attempts, 9)), row.seq);
        }
      })();
    },
    /** Earliest time a postponed vector row becomes due, or null. */
    nextDueAt(stage: OutboxStage): number | null {
      return db.query<{ at: number | null }, [OutboxStage]>("SELECT MIN(available_at) AS at FROM outbox WHERE stage = ?").get(stage)?.at ?? null;
    },
    counts(ownerId?: string): { text: number; vector: number } {
      const rows = ownerId === undefined
        ? db.query<{ stage: OutboxStage; n: number }, []>("SELECT stage, COUNT(*) AS n FROM outbox GROUP BY stage").all()
        : db.query<{ stage: OutboxStage; n: number }, [string]>("SELECT stage, COUNT(*) AS n FROM outbox WHERE owner_id = ? GROUP BY stage").all(ownerId);
      const out = { text: 0, vector: 0 };
      for (const r of rows) out[r.stage] = r.n;
      return out;
    },
    /** Makes postponed rows due now (after an embedder outage ends, or on request). */
    retryPostponed(): void {
      db.exec("UPDATE outbox SET available_at = 0 WHERE available_at > 0");
    },
    clear(): void {
      db.exec("DELETE FROM outbox");
    },
  };
}
export type Outbox = ReturnType<typeof createOutbox>;
