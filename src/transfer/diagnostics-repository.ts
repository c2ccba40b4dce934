import { first, sql, type Store } from "../db/store";

/**
 * The outbox's backlog as `mnemo doctor` reads it, with no index writer at hand: changes
 * waiting per stage, and when the oldest of all and the oldest for full text were written.
 * (The outbox's own module, search/outbox.ts, is the place for this read once it offers it.)
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
