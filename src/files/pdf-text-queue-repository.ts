import { all, first, sql, type Executor } from "../db/store";

/** A file whose text is still to be read: what the reader needs of it. */
export interface PendingPdf {
  seq: number;
  ownerId: string;
  key: string;
  blobId: string;
  size: number;
}

/** The pending files (the partial index `files_text_pending` holds them), read by the PDF text reader. */
export const pdfTextQueue = {
  /** Each owner with pending files, and the seq of their oldest one. */
  async owners(tx: Executor): Promise<Array<{ ownerId: string; firstSeq: number }>> {
    const rows = await all<{ owner_id: string; first_seq: number }>(
      tx,
      sql`SELECT owner_id, MIN(seq) AS first_seq FROM files WHERE text_status = 'pending' GROUP BY owner_id`,
    );
    return rows.map((r) => ({ ownerId: r.owner_id, firstSeq: Number(r.first_seq) }));
  },
  /** An owner's oldest pending file after `afterSeq`. */
  async next(tx: Executor, ownerId: string, afterSeq: number): Promise<PendingPdf | null> {
    const row = await first<{ seq: number; owner_id: string; key: string; blob_id: string; size: number }>(
      tx,
      sql`SELECT seq, owner_id, key, blob_id, size FROM files WHERE text_status = 'pending' AND owner_id = ${ownerId} AND seq > ${afterSeq} ORDER BY seq LIMIT 1`,
    );
    return (
      row && { seq: Number(row.seq), ownerId: row.owner_id, key: row.key, blobId: row.blob_id, size: Number(row.size) }
    );
  },
};

/**
 * The order of one pass: round robin by owner. Each turn goes to the owner served least
 * recently (never served first, then by their oldest pending file), who gets their oldest
 * file not yet tried in this pass; so one user's backlog of slow PDFs delays another
 * user's file by at most one reading, not by the whole backlog.
 */
export function roundRobin() {
  /** Per owner: the last seq tried in this pass, and the turn they were last served. */
  const tried = new Map<string, number>();
  const servedAt = new Map<string, number>();
  let turn = 0;
  return {
    async next(tx: Executor): Promise<PendingPdf | null> {
      const owners = await pdfTextQueue.owners(tx);
      owners.sort(
        (a, b) => (servedAt.get(a.ownerId) ?? -1) - (servedAt.get(b.ownerId) ?? -1) || a.firstSeq - b.firstSeq,
      );
      for (const { ownerId } of owners) {
        const file = await pdfTextQueue.next(tx, ownerId, tried.get(ownerId) ?? 0);
        if (!file) continue;
        tried.set(ownerId, file.seq);
        servedAt.set(ownerId, ++turn);
        return file;
      }
      return null;
    },
  };
}
