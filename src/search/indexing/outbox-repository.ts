import { all, chunks, first, list, run, sql, type Executor, type Sql, type Store } from "../../db/store";
import type { SearchKind, SourceRef } from "../types";

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
  /** When the change was recorded (ms since the epoch). */
  createdAt: number;
}

type Stored = {
  seq: number;
  owner_id: string;
  kind: SearchKind | "*";
  source_id: string;
  op: OutboxOp;
  stage: OutboxStage;
  attempts: number;
  created_at: number;
};
const toRow = (r: Stored): OutboxRow => ({
  seq: r.seq,
  ownerId: r.owner_id,
  kind: r.kind,
  sourceId: r.source_id,
  op: r.op,
  stage: r.stage,
  attempts: r.attempts,
  createdAt: r.created_at,
});

/** Narrows a query to rows of the given kinds (all without). */
const ofKinds = (kinds?: readonly string[]) => (kinds ? sql`AND kind IN ${list(kinds)}` : sql``);

/** Owners a batch narrows to when the oldest rows are spread over more of them (see `denser`). */
const DENSE_OWNERS = 64;

/** Analyses sources' current items into the search statistics, inside the write's transaction (term-stats.ts `refresh`). */
export type AnalyseSources = (tx: Executor, refs: SourceRef[]) => Promise<void>;

/**
 * The outbox: written in the same transaction as the record it describes, so the
 * index can never miss an acknowledged write; drained by the indexer. A change recorded
 * for full text is analysed there and then (`analyse`): the statistics and forward rows
 * searches score with never wait for the index writer. Without `analyse` the outbox only
 * reads (status and health).
 */
export function createOutbox(store: Store, analyse?: AnalyseSources) {
  const analysed = async (tx: Executor, refs: SourceRef[], stage: OutboxStage) => {
    if (stage !== "text" || !refs.length) return;
    if (!analyse) throw new Error("this outbox only reads: it was opened without the search statistics");
    for (const chunk of chunks(refs, 200)) await analyse(tx, chunk);
  };
  const db = store.db;
  /** The oldest due rows of a stage; with `owners`, only theirs (searches wait for them). */
  async function nextBatch(
    stage: OutboxStage,
    limit: number,
    owners?: string[],
    now = Date.now(),
  ): Promise<OutboxRow[]> {
    const owner = owners === undefined ? sql`` : sql`AND owner_id IN ${list(owners)}`;
    const rows = await all<Stored>(
      db,
      sql`SELECT seq, owner_id, kind, source_id, op, stage, attempts, created_at FROM outbox
                                            WHERE stage = ${stage} AND available_at <= ${now} ${owner} ORDER BY seq LIMIT ${limit}`,
    );
    return rows.map(toRow);
  }
  return {
    /** Records that a source changed, inside the record's own write transaction `tx`. */
    async enqueue(tx: Executor, ref: SourceRef, op: OutboxOp, stage: OutboxStage = "text"): Promise<void> {
      await analysed(tx, [ref], stage);
      await run(
        tx,
        sql`INSERT INTO outbox (owner_id, kind, source_id, op, stage, created_at)
                        VALUES (${ref.ownerId}, ${ref.kind}, ${ref.sourceId}, ${op}, ${stage}, ${Date.now()})`,
      );
    },
    /** Records many changes at once (rebuilds, re-embedding), inside `tx`. */
    async enqueueMany(tx: Executor, refs: SourceRef[], op: OutboxOp, stage: OutboxStage = "text"): Promise<void> {
      await analysed(tx, refs, stage);
      const now = Date.now();
      for (const chunk of chunks(refs, 200)) {
        const rows = chunk.map((ref) => sql`(${ref.ownerId}, ${ref.kind}, ${ref.sourceId}, ${op}, ${stage}, ${now})`);
        await run(
          tx,
          sql`INSERT INTO outbox (owner_id, kind, source_id, op, stage, created_at) VALUES ${sql.join(rows)}`,
        );
      }
    },
    /** Every source with a pending text-stage change, once. */
    async pendingTextSources(tx: Executor): Promise<SourceRef[]> {
      const rows = await all<{ owner_id: string; kind: SearchKind; source_id: string }>(
        tx,
        sql`SELECT DISTINCT owner_id, kind, source_id FROM outbox WHERE stage = 'text' AND owner_id <> '*'`,
      );
      return rows.map((row) => ({ ownerId: row.owner_id, kind: row.kind, sourceId: row.source_id }));
    },
    /** Asks the index writer (this process's or another's) to rebuild the whole index. */
    async enqueueRebuild(tx: Executor): Promise<void> {
      await run(
        tx,
        sql`INSERT INTO outbox (owner_id, kind, source_id, op, stage, created_at) VALUES ('*', '*', '*', 'rebuild', 'text', ${Date.now()})`,
      );
    },
    nextBatch,
    /**
     * The same work in fewer tables, when `window` (the oldest `limit` rows of a stage) is
     * spread over many owners who have more rows waiting (users importing at once, their
     * rows interleaved): a table commit costs about as much for one row as for a hundred,
     * so the batch takes whole backlogs, owner by owner, of the window's first DENSE_OWNERS
     * owners (the owner of the oldest row first), up to `limit` rows; each owner's rows in
     * seq order. Otherwise `window` itself (one row per owner, as for many users writing
     * once, cannot be made denser).
     */
    async denser(stage: OutboxStage, window: OutboxRow[], limit: number): Promise<OutboxRow[]> {
      const owners = [...new Set(window.map((row) => row.ownerId))];
      if (window.length < limit || owners.length <= DENSE_OWNERS || owners.includes("*")) return window;
      const picked = owners.slice(0, DENSE_OWNERS);
      const beyond = await first<{ seq: number }>(
        db,
        sql`SELECT seq FROM outbox WHERE stage = ${stage} AND owner_id IN ${list(picked)} AND seq > ${window[window.length - 1].seq} LIMIT 1`,
      );
      if (!beyond) return window;
      const batch: OutboxRow[] = [];
      let used = 0;
      for (const owner of picked) {
        if (batch.length >= limit) break;
        batch.push(...(await nextBatch(stage, limit - batch.length, [owner])));
        used++;
      }
      return batch.length / used > window.length / owners.length ? batch : window;
    },
    /**
     * A batch for searches that wait: the oldest rows of these owners, and when one
     * owner's backlog (a bulk import) fills it, the others' rows besides, so that no
     * waiting owner is left for a later batch.
     */
    async priorityBatch(limit: number, owners: string[]): Promise<OutboxRow[]> {
      const rows = await nextBatch("text", limit, owners);
      if (rows.length < limit || owners.length === 1) return rows;
      const included = new Set(rows.map((row) => row.ownerId));
      const left = owners.filter((owner) => !included.has(owner));
      return left.length ? rows.concat(await nextBatch("text", limit, left)) : rows;
    },
    /** Highest pending text-stage seq of an owner ('*' is a queued rebuild), or of anyone; null when none. */
    async pendingTextSeq(ownerId?: string): Promise<number | null> {
      const owner = ownerId === undefined ? sql`` : sql`AND owner_id = ${ownerId}`;
      return (
        (await first<{ seq: number | null }>(db, sql`SELECT MAX(seq) AS seq FROM outbox WHERE stage = 'text' ${owner}`))
          ?.seq ?? null
      );
    },
    /** When the oldest pending text-stage change (of one owner's, with `ownerId`) was written (ms since the epoch), or null: how far the index is behind. */
    async oldestPendingText(ownerId?: string): Promise<number | null> {
      const owner = ownerId === undefined ? sql`` : sql`AND owner_id = ${ownerId}`;
      const row = await first<{ created_at: number }>(
        db,
        sql`SELECT created_at FROM outbox WHERE stage = 'text' ${owner} ORDER BY seq LIMIT 1`,
      );
      return row ? Number(row.created_at) : null;
    },
    /**
     * In one query, an owner's highest pending text-stage seq of the given kinds (all
     * without) and a queued rebuild's (null when none): what a search of those kinds
     * waits for. A memory search does not wait for a document's rows, nor the reverse.
     */
    async pendingForSearch(
      ownerId: string,
      kinds?: readonly string[],
    ): Promise<{ own: number | null; rebuild: number | null }> {
      const row = await first<{ own: number | null; rebuild: number | null }>(
        db,
        sql`SELECT MAX(CASE WHEN owner_id = ${ownerId} ${ofKinds(kinds)} THEN seq END) AS own, MAX(CASE WHEN owner_id = '*' THEN seq END) AS rebuild
            FROM outbox WHERE stage = 'text' AND owner_id IN (${ownerId}, '*')`,
      );
      return { own: row?.own ?? null, rebuild: row?.rebuild ?? null };
    },
    /** Whether an owner still has text-stage rows (of the given kinds, all without) at or below `seq`. */
    async ownerHasTextUpTo(ownerId: string, seq: number, kinds?: readonly string[]): Promise<boolean> {
      return (
        (await first(
          db,
          sql`SELECT 1 AS one FROM outbox WHERE stage = 'text' AND owner_id = ${ownerId} AND seq <= ${seq} ${ofKinds(kinds)} LIMIT 1`,
        )) !== null
      );
    },
    /** An owner's pending text-stage rows of the given kinds: a search's index lag. */
    async pendingTextCount(ownerId: string, kinds?: readonly string[]): Promise<number> {
      return Number(
        (
          await first<{ n: number }>(
            db,
            sql`SELECT COUNT(*) AS n FROM outbox WHERE stage = 'text' AND owner_id = ${ownerId} ${ofKinds(kinds)}`,
          )
        )?.n ?? 0,
      );
    },
    async remove(seqs: number[], tx: Executor = db): Promise<void> {
      for (const chunk of chunks(seqs)) await run(tx, sql`DELETE FROM outbox WHERE seq IN ${list(chunk)}`);
    },
    async advanceToVector(seqs: number[], tx: Executor = db): Promise<void> {
      for (const chunk of chunks(seqs)) {
        await run(
          tx,
          sql`UPDATE outbox SET stage = 'vector', attempts = 0, available_at = 0 WHERE seq IN ${list(chunk)}`,
        );
      }
    },
    /** Postpones rows after a failure, with exponential backoff capped at five minutes. */
    async postpone(rows: OutboxRow[], now = Date.now()): Promise<void> {
      await store.transaction(async (tx) => {
        for (const row of rows) {
          const attempts = row.attempts + 1;
          const at = now + Math.min(300_000, 1_000 * 2 ** Math.min(attempts, 9));
          await run(tx, sql`UPDATE outbox SET attempts = ${attempts}, available_at = ${at} WHERE seq = ${row.seq}`);
        }
      });
    },
    /** Earliest time a postponed row of the stage becomes due, or null. */
    async nextDueAt(stage: OutboxStage): Promise<number | null> {
      return (
        (await first<{ at: number | null }>(db, sql`SELECT MIN(available_at) AS at FROM outbox WHERE stage = ${stage}`))
          ?.at ?? null
      );
    },
    /** The highest seq of each stage now: rows up to it may already be in the index after a crash. */
    async maxSeqs(): Promise<{ text: number; vector: number }> {
      const rows = await all<{ stage: OutboxStage; seq: number }>(
        db,
        sql`SELECT stage, MAX(seq) AS seq FROM outbox GROUP BY stage`,
      );
      const out = { text: 0, vector: 0 };
      for (const r of rows) out[r.stage] = r.seq;
      return out;
    },
    async counts(ownerId?: string): Promise<{ text: number; vector: number }> {
      const owner = ownerId === undefined ? sql`` : sql`WHERE owner_id = ${ownerId}`;
      const rows = await all<{ stage: OutboxStage; n: number }>(
        db,
        sql`SELECT stage, COUNT(*) AS n FROM outbox ${owner} GROUP BY stage`,
      );
      const out = { text: 0, vector: 0 };
      for (const r of rows) out[r.stage] = r.n;
      return out;
    },
    /** Makes postponed rows due now (after an embedder outage ends, or on request). */
    async retryPostponed(): Promise<void> {
      await run(db, sql`UPDATE outbox SET available_at = 0 WHERE available_at > 0`);
    },
    async clear(tx: Executor): Promise<void> {
      await run(tx, sql`DELETE FROM outbox`);
    },
  };
}
/** The outbox as the index writer uses it. */
export type IndexOutbox = ReturnType<typeof createOutbox>;
/** The outbox as the rest of the app uses it: domains record their changes (and ask for a rebuild) through it. */
export type Outbox = Pick<IndexOutbox, "enqueue" | "enqueueMany" | "enqueueRebuild" | "pendingTextSeq">;

/**
 * The outbox's backlog as `mnemo doctor` reads it, with no index writer at hand: changes
 * waiting per stage, and when the oldest of all and the oldest for full text were written.
 */
export async function outboxBacklog(store: Store) {
  const row = await first<{ text: number; vector: number; oldest: number | null; oldest_text: number | null }>(
    store.db,
    sql`SELECT COALESCE(SUM(CASE WHEN stage = 'text' THEN 1 ELSE 0 END), 0) AS text, COALESCE(SUM(CASE WHEN stage = 'vector' THEN 1 ELSE 0 END), 0) AS vector,
        MIN(created_at) AS oldest, MIN(CASE WHEN stage = 'text' THEN created_at END) AS oldest_text FROM outbox`,
  );
  return {
    text: Number(row?.text ?? 0),
    vector: Number(row?.vector ?? 0),
    oldest: row?.oldest ? Number(row.oldest) : null,
    oldestText: row?.oldest_text ? Number(row.oldest_text) : null,
  };
}

/** Which of an owner's sources of one kind a count takes: a condition on the outbox's `source_id` column. */
export type SourcesOfKind = { kind: SearchKind; holds: (column: Sql) => Sql };

/**
 * An owner's outbox rows still waiting, per stage, for the sources a condition picks (the
 * derived index's status asks for a workspace's documents and threads: which sources those
 * are is for documents and chats to say).
 */
export async function pendingFor(
  db: Executor,
  ownerId: string,
  sources: SourcesOfKind[],
): Promise<{ text: number; vector: number }> {
  const out = { text: 0, vector: 0 };
  if (!sources.length) return out;
  const picks = sources.map(({ kind, holds }) => sql`(o.kind = ${kind} AND ${holds(sql.raw("o.source_id"))})`);
  const rows = await all<{ stage: OutboxStage; n: number }>(
    db,
    sql`SELECT stage, COUNT(*) AS n FROM outbox o WHERE o.owner_id = ${ownerId} AND (${sql.join(picks, " OR ")}) GROUP BY stage`,
  );
  for (const row of rows) out[row.stage] = Number(row.n);
  return out;
}

/**
 * Whether the embedder is failing: some vector row (anyone's: the embedder is shared) has
 * failed and waits for a retry.
 */
export async function vectorRetriesWaiting(db: Executor): Promise<boolean> {
  return (await first(db, sql`SELECT 1 AS one FROM outbox WHERE stage = 'vector' AND attempts > 0 LIMIT 1`)) !== null;
}

/**
 * Takes the rows still pending for these sources of one owner and kind off the outbox,
 * inside `tx`, and says which sources had some: the caller queues each source once again
 * (a plain `insert` only for one new to the index with nothing pending).
 */
export async function takePending(
  tx: Executor,
  ownerId: string,
  kind: SearchKind,
  ids: string[],
): Promise<Set<string>> {
  const pending = new Set<string>();
  for (const chunk of chunks(ids)) {
    const rows = await all<{ source_id: string }>(
      tx,
      sql`SELECT DISTINCT source_id FROM outbox WHERE owner_id = ${ownerId} AND kind = ${kind} AND source_id IN ${list(chunk)}`,
    );
    const found = rows.map((r) => r.source_id);
    for (const id of found) pending.add(id);
    if (found.length)
      await run(
        tx,
        sql`DELETE FROM outbox WHERE owner_id = ${ownerId} AND kind = ${kind} AND source_id IN ${list(found)}`,
      );
  }
  return pending;
}
